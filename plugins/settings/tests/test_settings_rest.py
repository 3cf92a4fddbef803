"""The settings family's REST twins under /api/v1/me (issue 12), with a signed-in dashboard session:
each answers what its tool answers, bad input is a 400 naming the field, another student's
class meeting is refused exactly like an unknown one, and an anonymous caller gets 401.

The tests that only read or are refused share one demo campus (``unwritten``), and the bad-input
cases one signed-in student1 on it: each of them asserts the settings read back unchanged, so none
can change what the next one sees. Only the tests that change settings build a campus of their own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import CampusFactory, CampusHarness, RestClient, TestDatabases, harness_app, load_plugins
from campus_mcp.testing import test_settings as settings_for  # not test_*: pytest would collect it
from campus_settings.demo import first_meeting_id

API = "/api/v1/me/calendar-settings"
NOTIFICATIONS = "/api/v1/me/notifications"
MODERN = "2026-07-28"


async def _accept(_context: Any, _params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": True})


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    """A demo campus of its own, for a test that changes settings."""
    return await campus_factory(demo=True)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def unwritten(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    """One demo campus for this module's tests that change no setting (reads and refusals).

    Each of them checks that its refusals left the settings as they were, so a test that did write
    would fail there rather than surprise the next one. A campus per case (a copy of the template,
    an app start, a sign-in, two tool calls) cost 0.5-1 s a case on either engine; now ~0.05 s.
    """
    url = await campus_databases.demo_copy()
    registry = load_plugins(settings_for(url))
    harness = CampusHarness(app=harness_app(registry), registry=registry)
    if not campus_databases.demo_copy_is_current(harness.registry):
        await harness.migrate()
    yield harness
    await harness.close()
    await campus_databases.drop(url)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def student1(unwritten: CampusHarness) -> AsyncIterator[RestClient]:
    """student1 signed in to the dashboard of the shared campus, once for every bad-input case."""
    async with unwritten.rest() as client:
        await _sign_in(client, "student1")
        yield client


async def _tool(campus: CampusHarness, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    principal = await campus.student_principal("student1")
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=_accept) as client:
        result = await client.call_tool(tool, arguments or {})
    assert not result.is_error, (tool, result.content)
    assert result.structured_content is not None
    return result.structured_content


async def _sign_in(client: Any, username: str) -> None:
    login = await client.get("/login")
    token = login.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    signed = await client.post(
        "/login", data={"username": username, "password": "demo", "csrf_token": token, "next": "/dashboard"}
    )
    assert signed.status_code in (200, 303), signed.text


async def _meeting(campus: CampusHarness, username: str) -> int:
    principal = await campus.student_principal(username)
    async with campus.sessions() as session:
        meeting = await first_meeting_id(session, principal.user_id or 0)
    assert meeting is not None
    return meeting


def _but_result(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "result"}


async def test_reads_answer_what_the_tools_answer(unwritten: CampusHarness) -> None:
    campus = unwritten
    meeting = await _meeting(campus, "student1")
    async with campus.rest() as client:
        await _sign_in(client, "student1")
        got = await client.get(API)
        assert got.status_code == 200
        assert got.json() == await _tool(campus, "my_calendar_settings")
        # Issue 38: the rest on request, the same through the twin's query string.
        asked = {"every_level": True, "colors": True, "template_variables": True}
        full = await client.get(API, params={name: "true" for name in asked})
        assert full.status_code == 200, full.text
        assert full.json() == await _tool(campus, "my_calendar_settings", asked)
        assert full.json()["colors"] and not got.json()["colors"]
        body = {"meeting_time_id": meeting, "title_template": "{{crn}} {{room}}"}
        preview = await client.post(f"{API}/preview", json=body)
        assert preview.status_code == 200, preview.text
        assert preview.json() == await _tool(campus, "preview_template", body)
        assert preview.json()["preview"]["title"].startswith(preview.json()["meeting"]["crn"])


async def test_class_and_level_changes_answer_what_the_tools_answer(campus: CampusHarness) -> None:
    meeting = await _meeting(campus, "student1")
    async with campus.rest() as client:
        await _sign_in(client, "student1")
        patched = await client.patch(f"{API}/classes/{meeting}", json={"color": "sage", "reminders": [{"hours": 2}]})
        assert patched.status_code == 200, patched.text
        assert patched.json()["result"] == "updated"
        # The tool asked for the same change finds it made: the same answer but "unchanged".
        again = await _tool(
            campus, "update_class_settings", {"meeting_time_id": meeting, "color": "sage", "reminders": [{"hours": 2}]}
        )
        assert again["result"] == "unchanged" and _but_result(again) == _but_result(patched.json())
        assert patched.json()["resolved"]["reminders"] == [120]
        deleted = await client.delete(f"{API}/classes/{meeting}")
        assert deleted.status_code == 200 and deleted.json()["result"] == "deleted"
        assert deleted.json()["class_settings"] is None and deleted.json()["sources"]["color"] != "individual"
        level = await client.patch(f"{API}/final_exam", json={"color": "banana", "visibility": "private"})
        assert level.status_code == 200 and level.json()["result"] == "created"
        same = await _tool(
            campus, "update_calendar_settings", {"level": "final_exam", "color": "banana", "visibility": "private"}
        )
        assert same["result"] == "unchanged" and _but_result(same) == _but_result(level.json())
        gone = await client.delete(f"{API}/final_exam")
        assert gone.status_code == 200 and gone.json()["result"] == "deleted" and gone.json()["settings"] is None
        listed = await client.get(API)
        # The level has no settings of its own now: listed with every_level only (issue 38).
        assert "final_exam" not in [lv["level"] for lv in listed.json()["levels"]]
        listed = await client.get(API, params={"every_level": "true"})
        assert [lv["settings"] for lv in listed.json()["levels"] if lv["level"] == "final_exam"] == [None]


async def test_notifications_answer_what_the_tool_answers(campus: CampusHarness) -> None:
    async with campus.rest() as client:
        await _sign_in(client, "student1")
        paused = await client.patch(NOTIFICATIONS, json={"paused": True})
        assert paused.status_code == 200 and paused.json() == {
            "result": "updated",
            "paused": True,
            "paused_until": None,
            "paused_until_text": None,
            "not_changed": None,
        }
        assert await _tool(campus, "set_notifications", {"paused": True}) == {**paused.json(), "result": "unchanged"}
        timed = await client.patch(NOTIFICATIONS, json={"paused": True, "minutes": 45})
        assert timed.status_code == 200 and timed.json()["paused_until"] is not None
        resumed = await client.patch(NOTIFICATIONS, json={"paused": False})
        assert resumed.json() == {
            "result": "updated",
            "paused": False,
            "paused_until": None,
            "paused_until_text": None,
            "not_changed": None,
        }
        assert (await _tool(campus, "my_calendar_settings"))["notifications"] == {
            "paused": False,
            "paused_until": None,
            "paused_until_text": None,
        }


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("PATCH", f"{API}/classes/abc", {"color": "sage"}, "meeting_time_id"),
        ("DELETE", f"{API}/classes/0", None, "meeting_time_id"),
        ("PATCH", f"{API}/classes/MEETING", {"color": "chartreuse-ish"}, "color"),
        ("PATCH", f"{API}/classes/MEETING", {"reminders": [{"minutes": 0.5}]}, "reminders"),
        ("PATCH", f"{API}/classes/MEETING", {"visibility": "secret"}, "visibility"),
        ("PATCH", f"{API}/classes/MEETING", {"title_template": "{{title.__class__}}"}, "title_template"),
        ("PATCH", f"{API}/all_classes", {"color": "sage", "reset": ["color"]}, "reset"),
        ("PATCH", f"{API}/not_a_level", {"color": "sage"}, "level"),
        ("POST", f"{API}/preview", {"meeting_time_id": "first"}, "meeting_time_id"),
        ("PATCH", NOTIFICATIONS, {"paused": "maybe"}, "paused"),
        ("PATCH", NOTIFICATIONS, {"paused": True, "minutes": -5}, "minutes"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field(
    unwritten: CampusHarness,
    student1: RestClient,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    field: str,
) -> None:
    meeting = await _meeting(unwritten, "student1")
    before = await student1.get(API)
    assert before.status_code == 200, before.text
    answer = await student1.request(method, path.replace("MEETING", str(meeting)), json=body)
    assert answer.status_code == 400, (path, answer.status_code, answer.text)
    assert field in answer.text and "Traceback" not in answer.text, answer.text
    # Refused, so nothing changed: what the student reads back (every level, class and the
    # notifications) is what they read before. The campus is shared by the cases, so this is also
    # what keeps a case that did write from going unnoticed.
    after = await student1.get(API)
    assert after.status_code == 200 and after.json() == before.json()


async def test_another_students_meeting_is_refused_like_an_unknown_one(unwritten: CampusHarness) -> None:
    campus = unwritten
    theirs = await _meeting(campus, "student1")
    before = await _tool(campus, "my_calendar_settings")
    async with campus.rest() as client:
        await _sign_in(client, "student4")
        answers = []
        for meeting in (theirs, 987654):
            for method, body in (("PATCH", {"color": "sage"}), ("DELETE", None)):
                answer = await client.request(method, f"{API}/classes/{meeting}", json=body)
                answers.append((answer.status_code, answer.text.replace(str(meeting), "N")))
            preview = await client.post(f"{API}/preview", json={"meeting_time_id": meeting})
            answers.append((preview.status_code, preview.text.replace(str(meeting), "N")))
    assert answers[:3] == answers[3:]
    assert {status for status, _text in answers} == {404}
    assert "is not one of your class meetings" in answers[0][1]
    student1 = await _tool(campus, "my_calendar_settings")
    assert student1 == before
    (own,) = [c for c in student1["classes"] if c["meeting"]["meeting_time_id"] == theirs]
    assert own["resolved"]["color"] == "tomato"


async def test_an_anonymous_caller_is_refused(unwritten: CampusHarness) -> None:
    campus = unwritten
    meeting = await _meeting(campus, "student1")
    before = await _tool(campus, "my_calendar_settings")
    async with campus.rest() as client:
        for method, path, body in (
            ("GET", API, None),
            ("POST", f"{API}/preview", {}),
            ("PATCH", f"{API}/classes/{meeting}", {"color": "sage"}),
            ("DELETE", f"{API}/classes/{meeting}", None),
            ("PATCH", f"{API}/all_classes", {"color": "sage"}),
            ("DELETE", f"{API}/all_classes", None),
            ("PATCH", NOTIFICATIONS, {"paused": True}),
        ):
            answer = await client.request(method, path, json=body)
            assert answer.status_code == 401, (method, path, answer.status_code)
            assert "Sign in" in answer.text and "Traceback" not in answer.text
    assert await _tool(campus, "my_calendar_settings") == before
