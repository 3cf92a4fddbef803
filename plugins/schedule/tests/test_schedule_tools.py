"""The schedule tools and their REST twins, through the real MCP client and real HTTP: a student
sees only their own schedule; links open as that student and show nothing to another."""

from __future__ import annotations

import json
from typing import Any

from campus_catalog.models import Term
from campus_mcp.testing import CampusHarness
from campus_schedule.enrollment import set_term_sections
from sqlalchemy import select


async def _enroll(campus: CampusHarness, student: int, term_uid: str, crns: list[str]) -> None:
    async with campus.sessions() as session:
        term = (await session.scalars(select(Term).where(Term.uid == term_uid))).one()
        await set_term_sections(session, student, term, crns)


async def _call(campus: CampusHarness, who: str, tool: str, arguments: dict[str, Any], **options: Any) -> Any:
    principal = await campus.student_principal(who)
    async with campus.mcp(principal=principal, **options) as client:
        return await client.call_tool(tool, arguments)


async def test_my_courses_gives_each_meeting_with_its_id_and_both_clocks(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    await _enroll(schedule_campus, ids["student1"], "202710", ["21001", "21002", "21003"])
    result = await _call(schedule_campus, "student1", "my_courses", {})
    assert not result.is_error, result
    answer = result.structured_content
    assert answer["term"] == {"uid": "202710", "name": "Fall 2026"}
    comp = next(c for c in answer["courses"] if c["crn"] == "21001")
    assert comp["course_code"] == "COMP 1000" and comp["instructors"] == ["Ada Lovelace"]
    monday = comp["meetings"][0]
    assert (monday["day"], monday["start"], monday["start_12h"], monday["end_12h"], monday["room"]) == (
        "M",
        "10:00",
        "10:00 AM",
        "10:50 AM",
        "010",
    )
    assert isinstance(monday["meeting_time_id"], int)
    assert len({m["meeting_time_id"] for m in comp["meetings"]}) == 2
    # The 30-minute clash with MATH 1750 is shown, not refused.
    assert [(c["first"]["crn"], c["second"]["crn"]) for c in answer["conflicts"]] == [("21001", "21003")]
    assert answer["advisory"]["data_sources"][0]["key"] == "sections"


async def test_no_student_sees_another_students_schedule(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    await _enroll(schedule_campus, ids["student1"], "202710", ["21001"])
    await _enroll(schedule_campus, ids["student2"], "202710", ["21003"])
    for tool, arguments in (
        ("my_courses", {}),
        ("my_course_history", {}),
        ("my_finals", {}),
        ("my_busy_times", {"start_date": "2026-01-01", "end_date": "2026-04-30"}),
    ):
        result = await _call(schedule_campus, "student2", tool, arguments)
        assert not result.is_error, (tool, result)
        assert "21001" not in json.dumps(result.structured_content), tool
    async with schedule_campus.rest() as rest:
        # REST twins read the signed-in student of the session only: anonymous gets no schedule.
        anonymous = await rest.get("/api/v1/me/courses")
        assert anonymous.status_code in (401, 403) and "21001" not in anonymous.text


async def test_anonymous_callers_get_no_schedule(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    await _enroll(schedule_campus, ids["student1"], "202710", ["21001"])
    async with schedule_campus.mcp() as client:
        # The host does not list a signed-in tool to an anonymous caller; a call is refused either way.
        try:
            result = await client.call_tool("my_courses", {})
        except Exception as exc:  # the SDK's MCPError for a tool the caller may not call
            text = str(exc)
        else:
            assert result.is_error
            text = result.content[0].text
    assert "21001" not in text


async def test_put_checks_the_whole_list_first_and_get_gives_my_courses(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    async with schedule_campus.rest() as rest:
        login = await rest.get("/login")
        assert login.status_code == 200
        token = login.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        signed = await rest.post(
            "/login", data={"username": "student1", "password": "demo", "csrf_token": token, "next": "/dashboard"}
        )
        assert signed.status_code in (200, 302, 303), signed.text
        put = await rest.put("/api/v1/me/terms/202710/sections", json={"crns": ["21001", "21002"]})
        assert put.status_code == 200, put.text
        assert [c["crn"] for c in put.json()["courses"]] == ["21001", "21002"]
        bad = await rest.put("/api/v1/me/terms/202710/sections", json={"crns": ["21003", "21004", "41001"]})
        assert bad.status_code == 400
        assert "21004 is cancelled" in bad.json()["message"] and "Spring 2027" in bad.json()["message"]
        got = await rest.get("/api/v1/me/terms/202710/sections")
        assert [c["crn"] for c in got.json()["courses"]] == ["21001", "21002"]
        page = await rest.get("/dashboard/schedule?term=202710")
        assert page.status_code == 200 and "COMP 1000" in page.text and 'name="csrf_token"' in page.text
        assert page.headers["x-frame-options"] == "DENY" and "content-security-policy" in page.headers


async def test_every_link_opens_for_the_student_and_shows_nothing_to_another(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    fresh = await _call(schedule_campus, "student1", "my_courses", {})
    await _enroll(schedule_campus, ids["student1"], "202710", ["21001"])
    result = await _call(schedule_campus, "student1", "my_courses", {})
    links = [item for item in result.content if getattr(item, "type", "") == "resource_link"]
    onboarding = [item for item in fresh.content if getattr(item, "type", "") == "resource_link"]
    assert [str(link.uri).split("/", 3)[3] for link in links] == ["dashboard/schedule?term=202710"]
    assert [str(link.uri).split("/", 3)[3] for link in onboarding] == ["dashboard/schedule/start"]
    async with schedule_campus.rest() as rest:  # one client: the app's lifespan runs once
        for who in ("student1", "student2"):
            login = await rest.get("/login")
            token = login.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
            await rest.post(
                "/login", data={"username": who, "password": "demo", "csrf_token": token, "next": "/dashboard"}
            )
            for link in [*links, *onboarding]:
                page = await rest.get(str(link.uri), follow_redirects=True)
                assert page.status_code == 200, (who, link.uri)
                assert (
                    ("Add your courses" in page.text)
                    if who == "student2"
                    else ("COMP 1000" in page.text or "Add" in page.text)
                )
                if who == "student2":
                    assert "21001" not in page.text and "COMP 1000" not in page.text
