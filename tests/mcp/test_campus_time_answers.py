"""What a student reads, in the campus's time and words (issue 24, points 2 and 5), through the
MCP SDK client on a demo campus of the test's own.

- Every time is campus time with its 12-hour form beside it: ``set_notifications``' pause end and
  the settings rows' ``updated_at`` (UTC before), ``friend_busy_times``' blocks (no 12-hour fields
  before, while ``my_busy_times`` had them).
- ``my_course_history`` gives each term a status (completed, in progress, upcoming): a term in
  progress and the next one were listed as history before.
- ``my_calendar_settings``' level rows say the value that applies and where it comes from, not
  ``reminders: null`` where the default applies.
- "Make my lab events green" for a student with no lab says, in the question and the answer, that
  no event of the calendar changes.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest
from campus_mcp.testing import CampusFactory, CampusHarness, campus_today
from sqlalchemy import text

MODERN = "2026-07-28"


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    # Seed 000's "apply": a legacy client changes at once; these tests are about the answers' times.
    return await campus_factory(demo=True, confirmation_fallback="apply")


async def _tool(campus: CampusHarness, username: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await campus.call(tool, arguments, principal=await campus.student_principal(username))
    assert not result.is_error, result.content
    answer: dict[str, Any] | None = result.structured_content
    assert answer is not None
    return answer


def _in_campus_zone(moment: str, zone: ZoneInfo) -> datetime:
    """The answer's time, checked to carry the campus's UTC offset of its day."""
    parsed = datetime.fromisoformat(moment)
    assert parsed.utcoffset() == parsed.astimezone(zone).utcoffset(), moment
    return parsed


async def test_a_pause_and_a_settings_change_are_told_in_campus_time_with_12_hour_text(campus: CampusHarness) -> None:
    zone = ZoneInfo(campus.settings.timezone)
    paused = await _tool(campus, "student1", "set_notifications", {"paused": True, "hours": 3})
    until = _in_campus_zone(paused["paused_until"], zone)
    assert abs(until - (datetime.now(UTC) + timedelta(hours=3))) < timedelta(minutes=2)
    local = until.astimezone(zone)
    hour = f"{(local.hour % 12) or 12}:{local:%M} {'AM' if local.hour < 12 else 'PM'}"
    assert paused["paused_until_text"] == f"{local:%A, %B} {local.day}, {hour} ({campus.settings.timezone} time)"
    listed = await _tool(campus, "student1", "my_calendar_settings", {})
    assert listed["notifications"]["paused_until"] == paused["paused_until"]
    assert listed["notifications"]["paused_until_text"] == paused["paused_until_text"]
    rows = [entry["settings"] for entry in listed["levels"] if entry["settings"] is not None]
    assert rows, "the demo student has settings of their own"
    for row in rows:
        _in_campus_zone(row["updated_at"], zone)
        assert row["updated_at_text"].endswith(f"M ({campus.settings.timezone} time)")


async def test_a_friends_busy_times_have_the_12_hour_times_my_busy_times_has(campus: CampusHarness) -> None:
    zone = ZoneInfo(campus.settings.timezone)
    # Two weeks of the demo's Fall 2026, whatever today is: the demo friends have classes then.
    first = date(2026, 10, 19)
    week = {"start_date": first.isoformat(), "end_date": (first + timedelta(days=20)).isoformat()}
    friends = await _tool(campus, "student1", "list_friends", {})
    assert friends["friends"], "demo student1 has friends"
    friend = friends["friends"][0]["friend_id"]
    busy = (await _tool(campus, "student1", "friend_busy_times", {"friend_id": friend, **week}))["busy"]
    assert busy, "a demo friend has classes in three weeks of term"
    dates = {b["date"] for b in busy}
    assert min(dates) < "2026-11-01" < max(dates), "both sides of the end of daylight saving"
    for block in busy:
        start, end = _in_campus_zone(block["start"], zone), _in_campus_zone(block["end"], zone)
        assert block["date"] == start.date().isoformat()
        assert (block["start_time"], block["end_time"]) == (f"{start:%H:%M}", f"{end:%H:%M}")
        assert block["start_12h"] == f"{(start.hour % 12) or 12}:{start:%M} {'AM' if start.hour < 12 else 'PM'}"
        assert block["end_12h"] == f"{(end.hour % 12) or 12}:{end:%M} {'AM' if end.hour < 12 else 'PM'}"


async def test_the_course_history_tells_completed_in_progress_and_upcoming_terms_apart(campus: CampusHarness) -> None:
    today = campus_today(campus.settings)
    terms = (await _tool(campus, "student1", "my_course_history", {}))["terms"]
    for term in terms:
        start, end = date.fromisoformat(term["start_date"]), date.fromisoformat(term["end_date"])
        expected = "completed" if end < today else "upcoming" if start > today else "in_progress"
        assert term["status"] == expected, term["term"]
    assert len(terms) >= 3, "the demo student has past terms, the current one and the next"


async def test_each_level_row_says_the_value_that_applies_and_its_source(campus: CampusHarness) -> None:
    # Every level: a level without settings of its own is listed on request (issue 38).
    answer = await _tool(campus, "student1", "my_calendar_settings", {"every_level": True})
    levels = {e["level"]: e for e in answer["levels"]}
    final = levels["final_exam"]
    assert final["effective"]["reminders"] == [1440, 60]
    assert final["sources"]["reminders"] in ("final_exam", "system_default")
    lab = levels["laboratory"]
    for field in ("title_template", "color", "visibility", "reminders"):
        assert lab["effective"][field] is not None, field
        mine = (lab["settings"] or {}).get(field)
        if mine is None or mine == "":
            assert lab["sources"][field] in ("global", "system_default"), field
            if lab["sources"][field] == "global":
                assert lab["effective"][field] == levels["all_classes"]["effective"][field]
        else:
            assert lab["sources"][field] == "event_type:laboratory" and lab["effective"][field] == mine
    assert levels["all_classes"]["sources"]["color"] in ("global", "system_default")
    assert levels["university_events"]["effective"]["reminders"] is not None


async def _new_student(campus: CampusHarness, username: str) -> None:
    async with campus.sessions() as session:
        await session.execute(
            text(
                "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
                "VALUES (:u, :d, :e, true, :now, 0)"
            ),
            {"u": username, "d": "New Student", "e": f"{username}@example.edu", "now": datetime.now(UTC)},
        )
        await session.commit()


async def test_making_lab_events_green_without_a_lab_says_that_no_event_changes(campus: CampusHarness) -> None:
    await _new_student(campus, "newcomer")
    asked: list[str] = []

    async def accept(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    student = await campus.student_principal("newcomer")
    async with campus.mcp(principal=student, mode=MODERN, elicitation_callback=accept) as client:
        result = await client.call_tool("update_calendar_settings", {"level": "laboratory", "color": "sage"})
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer is not None and answer["result"] == "created"
    said = "You have no laboratory classes on your schedule, so this changes no event in your calendar now"
    assert said in answer["note"]
    assert len(asked) == 1 and said in asked[0]
    # A student with labs is not told so; a university event category nobody has is.
    labs = await _tool(campus, "student1", "update_calendar_settings", {"level": "laboratory", "color": "banana"})
    assert labs["note"] is None
    nowhere = await _tool(
        campus, "student1", "update_calendar_settings", {"level": "university_events:no_such_kind", "color": "sage"}
    )
    assert nowhere["note"].startswith("No university event has the category no_such_kind, so this changes no event")
    async with campus.sessions() as session:
        category = (await session.execute(text("SELECT category FROM catalog_university_events LIMIT 1"))).scalar()
    assert category, "the demo campus has university events"
    real = await _tool(
        campus, "student1", "update_calendar_settings", {"level": f"university_events:{category}", "color": "sage"}
    )
    assert real["note"] is None
