"""``set_notifications`` with an end (issue 39, point 3), through the MCP SDK client and the REST twin.

"Pause my reminders until Monday" is ``until: "monday"``: the model copies the student's words
and does no arithmetic. Every question the student reads (the form's message, the in-band
question) and the answer say the end as a date and time on the campus's clock, also for a length
("for 2 hours" says when that is). A length's end moves with the clock, yet a code given for it is
still good a few minutes later. An end that is past, unreadable or given twice is refused with an
example; the REST twin takes the same argument.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest
from campus_mcp import campus_time_text
from campus_mcp.testing import CampusFactory, CampusHarness

from tests.support.endpoints import confirmation_code_in

MODERN = "2026-07-28"
NOTIFICATIONS = "/api/v1/me/notifications"


def _words(moment: datetime, zone: str) -> str:
    return f"{campus_time_text(moment, zone)} ({zone} time)"


def _next_monday(zone: str) -> datetime:
    today = datetime.now(ZoneInfo(zone)).date()
    day = today + timedelta(days=(0 - today.weekday()) % 7 or 7)
    return datetime.combine(day, time(0, 0), tzinfo=ZoneInfo(zone))


def _text(result: types.CallToolResult) -> str:
    return "".join(item.text for item in result.content if isinstance(item, types.TextContent))


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    # in_band named: the in-band question is one of the questions a student reads.
    return await campus_factory(demo=True, confirmation_fallback="in_band")


async def test_until_a_weekday_is_asked_and_answered_as_its_date_and_time(campus: CampusHarness) -> None:
    zone = campus.settings.timezone
    monday = _next_monday(zone)
    asked: list[str] = []

    async def accept(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    principal = await campus.student_principal("student1")
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=accept) as client:
        result = await client.call_tool("set_notifications", {"paused": True, "until": "Monday"})
    assert asked == [
        "Pause the reminders of every event in your calendar sync until "
        f"{_words(monday, zone)}, also those of class settings.\nNow your reminders are on."
    ]
    answer = result.structured_content
    assert answer is not None and answer["result"] == "updated"
    assert datetime.fromisoformat(answer["paused_until"]) == monday
    assert answer["paused_until_text"] == _words(monday, zone)


async def test_a_length_says_its_end_and_its_code_is_good_minutes_later(
    campus: CampusHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    import campus_settings.service

    zone = campus.settings.timezone
    principal = await campus.student_principal("student1")
    pause = {"paused": True, "hours": 2}
    async with campus.mcp(principal=principal, mode="legacy") as client:
        first = await client.call_tool("set_notifications", pause)
        said = _text(first)
        end = (datetime.now(UTC) + timedelta(hours=2)).replace(second=0, microsecond=0)
        # The question says the end, on the campus's clock (the minute may have turned meanwhile).
        assert any(
            f"for 120 minutes, until {_words(end - timedelta(minutes=back), zone)}, also" in said for back in (0, 1)
        ), said
        # Three minutes later (the student read the question), the code still makes the change.
        later = datetime.now(UTC) + timedelta(minutes=3)
        monkeypatch.setattr(campus_settings.service, "utcnow", lambda: later)
        done = await client.call_tool("set_notifications", {**pause, "confirmation": confirmation_code_in(said)})
    assert not done.is_error, _text(done)
    answer = done.structured_content
    assert answer is not None and answer["result"] == "updated"
    until = (later + timedelta(hours=2)).replace(second=0, microsecond=0)
    assert datetime.fromisoformat(answer["paused_until"]) == until
    assert answer["paused_until_text"] == _words(until, zone)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"paused": True, "until": "2001-01-01T09:00"}, "is already past"),
        ({"paused": True, "until": "next week-ish"}, "is not a date, a time or a weekday"),
        ({"paused": True, "until": "2099-01-01"}, "more than a year away"),
        ({"paused": True, "until": "monday", "hours": 2}, "not hours and until"),
        ({"paused": False, "until": "monday"}, "until only goes with paused: true"),
    ],
)
async def test_a_bad_end_is_refused_with_what_to_give(
    demo_campus: CampusHarness, arguments: dict[str, Any], words: str
) -> None:
    principal = await demo_campus.student_principal("student1")
    result = await demo_campus.call("set_notifications", arguments, principal=principal)
    assert result.is_error and words in _text(result), _text(result)
    if "past" in words or "weekday" in words:
        assert "'2026-12-14T09:00'" in _text(result) and demo_campus.settings.timezone in _text(result)


async def test_the_rest_twin_takes_until(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    zone = campus.settings.timezone
    moment = datetime.now(ZoneInfo(zone)).replace(second=0, microsecond=0) + timedelta(days=2)
    async with campus.rest() as client:
        login = await client.get("/login")
        token = login.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        form = {"username": "student1", "password": "demo", "csrf_token": token, "next": "/dashboard"}
        assert (await client.post("/login", data=form)).status_code in (200, 303)
        paused = await client.patch(NOTIFICATIONS, json={"paused": True, "until": moment.strftime("%Y-%m-%dT%H:%M")})
        assert paused.status_code == 200, paused.text
        assert datetime.fromisoformat(paused.json()["paused_until"]) == moment
        assert paused.json()["paused_until_text"] == _words(moment, zone)
        bad = await client.patch(NOTIFICATIONS, json={"paused": True, "until": "yesterday"})
        assert bad.status_code == 400 and "until" in bad.text
