"""set_my_sections through the real MCP client (2026-07-28 with an elicitation callback, and the
legacy era) and its REST twin ``PUT /api/v1/me/terms/{term}/sections`` over HTTP, on the schedule
test campus (Fall 2026: COMP 1000 21001 with its lab 21002, MATH 1750 21003 overlapping COMP 1000
on Monday and Wednesday, 21004 cancelled; Spring 2027: 41001)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import mcp_types as types
import pytest
from campus_catalog.models import Term
from campus_mcp.testing import CampusHarness
from campus_schedule.enrollment import enrolled_sections, set_term_sections
from sqlalchemy import select

MODERN = "2026-07-28"
FALL = "202710"


async def _enroll(campus: CampusHarness, student: int, crns: list[str], term_uid: str = FALL) -> None:
    async with campus.sessions() as session:
        term = (await session.scalars(select(Term).where(Term.uid == term_uid))).one()
        await set_term_sections(session, student, term, crns)


async def _crns(campus: CampusHarness, student: int, term_uid: str = FALL) -> list[str]:
    async with campus.sessions() as session:
        return [s.crn for s in await enrolled_sections(session, student, term_uid)]


def answering(action: Literal["accept", "decline", "cancel"], confirm: bool | None = True) -> Any:
    """The student's answer to the host's question; keeps each question it was asked."""
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.requested_schema["required"] == ["confirm"]
        asked.append(params.message)
        content = {"confirm": confirm} if action == "accept" and confirm is not None else None
        return types.ElicitResult(action=action, content=content)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


async def _set(campus: CampusHarness, who: str, arguments: dict[str, Any], callback: Any = None) -> Any:
    principal = await campus.student_principal(who)
    options: dict[str, Any] = {"mode": MODERN, "elicitation_callback": callback} if callback else {}
    async with campus.mcp(principal=principal, **options) as client:
        return await client.call_tool("set_my_sections", arguments)


async def test_accepting_changes_the_sections_and_the_question_says_what_changes(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    await _enroll(schedule_campus, ids["student1"], ["21001", "21002"])
    await _enroll(schedule_campus, ids["student1"], ["41001"], "202720")
    await _enroll(schedule_campus, ids["student2"], ["21001", "21002"])
    callback = answering("accept")
    result = await _set(schedule_campus, "student1", {"term": FALL, "crns": ["21001", "21003"]}, callback)
    assert not result.is_error, result.content
    assert callback.asked == [
        "Set your Fall 2026 (202710) schedule to 2 sections.\n"
        "Add: MATH 1750 (CRN 21003)\n"
        "Remove: COMP 1000L (CRN 21002)\n"
        "Time conflicts in the new list: COMP 1000 (CRN 21001) and MATH 1750 (CRN 21003) on MW 10:20 AM-10:50 AM\n"
        "Nothing else changes: your other terms keep their sections."
    ]
    answer = result.structured_content
    assert answer["result"] == "changed" and answer["not_changed"] is None
    assert (answer["added"], answer["removed"]) == (["21003"], ["21002"])
    assert [c["crn"] for c in answer["courses"]] == ["21001", "21003"]
    # The clash is shown, not refused.
    assert [(c["first"]["crn"], c["second"]["crn"]) for c in answer["conflicts"]] == [("21001", "21003")]
    assert await _crns(schedule_campus, ids["student1"]) == ["21001", "21003"]
    # Another term of the student, and another student's sections, never change.
    assert await _crns(schedule_campus, ids["student1"], "202720") == ["41001"]
    assert await _crns(schedule_campus, ids["student2"]) == ["21001", "21002"]


@pytest.mark.parametrize(
    ("action", "confirm", "reason"),
    [("decline", None, "declined"), ("cancel", None, "cancelled"), ("accept", False, "declined")],
)
async def test_declining_changes_nothing(
    schedule_campus: CampusHarness,
    ids: dict[str, int],
    action: Literal["accept", "decline", "cancel"],
    confirm: bool | None,
    reason: str,
) -> None:
    await _enroll(schedule_campus, ids["student1"], ["21001", "21002"])
    callback = answering(action, confirm)
    result = await _set(schedule_campus, "student1", {"term": "Fall 2026", "crns": ["21003"]}, callback)
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["result"] == "unchanged"
    assert answer["not_changed"]["reason"] == reason and answer["not_changed"]["message"]
    assert (answer["added"], answer["removed"]) == ([], [])
    # The answer gives the list as it still is.
    assert [c["crn"] for c in answer["courses"]] == ["21001", "21002"]
    assert len(callback.asked) == 1
    assert await _crns(schedule_campus, ids["student1"]) == ["21001", "21002"]


async def test_a_bad_crn_among_good_ones_is_an_error_naming_it_asks_nothing_changes_nothing(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    await _enroll(schedule_campus, ids["student1"], ["21001"])
    callback = answering("accept")
    result = await _set(
        schedule_campus, "student1", {"term": FALL, "crns": ["21002", "21004", "41001", "29999"]}, callback
    )
    assert result.is_error
    text = result.content[0].text
    assert "Nothing was changed" in text
    assert "CRN 21004 is cancelled in Fall 2026" in text
    assert "CRN 41001 is a section of Spring 2027, not of Fall 2026" in text
    assert "CRN 29999 is not a section the campus knows in Fall 2026" in text
    assert "21002" not in text  # the good one is not blamed
    assert "Traceback" not in text
    assert callback.asked == []
    assert await _crns(schedule_campus, ids["student1"]) == ["21001"]


async def test_a_crn_that_is_not_a_number_is_named(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    callback = answering("accept")
    result = await _set(schedule_campus, "student1", {"term": FALL, "crns": ["21001", "chem"]}, callback)
    assert result.is_error
    text = result.content[0].text
    assert "'chem' is not a CRN" in text and "Traceback" not in text
    assert callback.asked == []
    assert await _crns(schedule_campus, ids["student1"]) == []


async def test_the_same_list_asks_nothing_and_changes_nothing(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    await _enroll(schedule_campus, ids["student1"], ["21001", "21002"])
    callback = answering("decline")
    result = await _set(schedule_campus, "student1", {"term": FALL, "crns": "21002, 21001"}, callback)
    assert not result.is_error, result.content
    assert callback.asked == []
    answer = result.structured_content
    assert answer["result"] == "unchanged" and answer["not_changed"] is None
    assert [c["crn"] for c in answer["courses"]] == ["21001", "21002"]


async def test_a_legacy_client_changes_without_a_question(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    await _enroll(schedule_campus, ids["student2"], ["21003"])
    result = await _set(schedule_campus, "student1", {"term": FALL, "crns": ["21001", "21002"]})
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["result"] == "changed" and (answer["added"], answer["removed"]) == (["21001", "21002"], [])
    assert await _crns(schedule_campus, ids["student1"]) == ["21001", "21002"]
    assert await _crns(schedule_campus, ids["student2"]) == ["21003"]


async def test_the_idempotency_key_answers_a_repeat_with_the_first_answer(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    arguments = {"term": FALL, "crns": ["21001"], "idempotency_key": "add-comp-1000"}
    first = await _set(schedule_campus, "student1", arguments)
    assert not first.is_error, first.content
    # The page removes the section meanwhile; the repeat of the same call runs nothing.
    await _enroll(schedule_campus, ids["student1"], [])
    again = await _set(schedule_campus, "student1", arguments)
    assert not again.is_error, again.content
    assert again.structured_content == first.structured_content
    assert await _crns(schedule_campus, ids["student1"]) == []


async def test_without_schedule_write_nothing_changes(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    principal = await schedule_campus.student_principal("student1", scopes=["schedule:read"])
    async with schedule_campus.mcp(principal=principal) as client:
        result: Any = await client.call_tool("set_my_sections", {"term": FALL, "crns": ["21001"]})
    assert result.is_error and "'schedule:write'" in result.content[0].text
    assert await _crns(schedule_campus, ids["student1"]) == []


async def _signed_in(rest: Any, who: str) -> None:
    login = await rest.get("/login")
    token = login.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    signed = await rest.post("/login", data={"username": who, "password": "demo", "csrf_token": token})
    assert signed.status_code in (200, 302, 303), signed.text


async def test_the_put_route_answers_what_the_tool_answers(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    await _enroll(schedule_campus, ids["student1"], ["21002"])
    await _enroll(schedule_campus, ids["student2"], ["21002"])
    tool = await _set(schedule_campus, "student1", {"term": FALL, "crns": ["21001", "21003"]})
    assert not tool.is_error, tool.content
    async with schedule_campus.rest() as rest:
        await _signed_in(rest, "student2")
        put = await rest.put(f"/api/v1/me/terms/{FALL}/sections", json={"crns": ["21001", "21003"]})
        assert put.status_code == 200, put.text
        # Whole answers, meeting ids and all; the tool's advisory is the one key the tool adds.
        assert put.json() == {k: v for k, v in tool.structured_content.items() if k != "advisory"}
        bad = await rest.put(f"/api/v1/me/terms/{FALL}/sections", json={"crns": ["21001", "21004"]})
        assert bad.status_code == 400
        assert "CRN 21004 is cancelled" in bad.json()["message"] and "Traceback" not in bad.text
    assert await _crns(schedule_campus, ids["student2"]) == ["21001", "21003"]
    assert await _crns(schedule_campus, ids["student1"]) == ["21001", "21003"]


async def test_the_dashboard_forms_and_the_tool_set_the_same_list(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    # The page's add and remove forms save through the same service as the tool, with its checks.
    async with schedule_campus.rest() as rest:
        await _signed_in(rest, "student1")
        page = await rest.get(f"/dashboard/schedule?term={FALL}")
        token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        for action, crn in (("add", "21001"), ("add", "21003"), ("add", "21002"), ("remove", "21003")):
            done = await rest.post(
                f"/dashboard/schedule/{action}",
                data={"csrf_token": token, "term": FALL, "crn": crn},
                follow_redirects=False,
            )
            assert done.status_code == 303, done.text
        refused = await rest.post("/dashboard/schedule/add", data={"csrf_token": token, "term": FALL, "crn": "21004"})
        assert refused.status_code == 400 and "CRN 21004 is cancelled in Fall 2026" in refused.text
    assert await _crns(schedule_campus, ids["student1"]) == ["21001", "21002"]
    # The tool finds the page's list as its own: the same list asks nothing.
    callback = answering("accept")
    same = await _set(schedule_campus, "student1", {"term": FALL, "crns": ["21002", "21001"]}, callback)
    assert same.structured_content["result"] == "unchanged" and callback.asked == []


async def test_saves_of_one_student_at_once_take_turns_and_never_answer_a_server_error(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    # Issue 30: parallel set_my_sections calls of one student clashed on the one-row-per-section
    # rule and answered "internal error". Now each save waits for the one before it.
    lists = [["21001", "21002"], ["21003"], ["21001", "21003"], ["21002", "21003"]]
    principal = await schedule_campus.student_principal("student1")
    async with schedule_campus.mcp(principal=principal) as client:
        for _ in range(3):
            results = await asyncio.gather(
                *(client.call_tool("set_my_sections", {"term": FALL, "crns": lists[i % 4]}) for i in range(16))
            )
            errors = [r.content[0].text for r in results if r.is_error]  # type: ignore[union-attr]
            assert errors == []
            # Whole lists only: the schedule is one the student asked for, never a mix of two.
            assert sorted(await _crns(schedule_campus, ids["student1"])) in [sorted(crns) for crns in lists]
