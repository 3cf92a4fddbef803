"""The settings tools' paths not covered elsewhere, through the real MCP client: a declined or
cancelled update_class_settings and set_notifications change nothing and say so (result
"unchanged"), and a new university events color removes the categories' colors, counted in the
question and in the answer."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

import mcp_types as types
import pytest
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_settings.demo import first_meeting_id
from campus_settings.models import ClassSetting, LevelSetting, NotificationSetting
from sqlalchemy import select

MODERN = "2026-07-28"


def answering(action: Literal["accept", "decline", "cancel"]) -> Any:
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(demo=True)


async def _call(
    campus: CampusHarness, action: Literal["accept", "decline", "cancel"], tool: str, args: dict[str, Any]
) -> tuple[Any, list[str]]:
    principal = await campus.student_principal("student1")
    callback = answering(action)
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content, callback.asked  # type: ignore[attr-defined]


async def _rows(campus: CampusHarness) -> list[str]:
    async with campus.sessions() as session:
        out = []
        for model in (LevelSetting, ClassSetting, NotificationSetting):
            for row in await session.scalars(select(model)):
                out.append(repr({c.key: getattr(row, c.key) for c in model.__table__.columns}))
        return sorted(out)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_class_change_changes_nothing(
    campus: CampusHarness, action: Literal["decline", "cancel"]
) -> None:
    principal = await campus.student_principal("student1")
    async with campus.sessions() as session:
        meeting = await first_meeting_id(session, principal.user_id or 0)
    before = await _rows(campus)
    answer, asked = await _call(
        campus, action, "update_class_settings", {"meeting_time_id": meeting, "color": "sage", "reset": ["reminders"]}
    )
    assert len(asked) == 1 and "- color: tomato (this class) -> sage (this class)" in asked[0]
    assert answer["result"] == "unchanged" and answer["not_changed"]["reason"] == (
        "declined" if action == "decline" else "cancelled"
    )
    # The answer shows what stays: the class's own color and reminders.
    assert answer["class_settings"]["color"] == "tomato" and answer["resolved"]["reminders"] == [10, 60]
    assert await _rows(campus) == before


@pytest.mark.parametrize("args", [{"paused": True, "hours": 2.0}, {"paused": True}])
async def test_a_declined_pause_changes_nothing(campus: CampusHarness, args: dict[str, Any]) -> None:
    before = await _rows(campus)
    answer, asked = await _call(campus, "decline", "set_notifications", args)
    assert len(asked) == 1 and asked[0].startswith("Pause the reminders of every event")
    assert answer["result"] == "unchanged" and answer["not_changed"]["reason"] == "declined"
    assert (answer["paused"], answer["paused_until"]) == (False, None)
    assert await _rows(campus) == before
    # Paused, a declined resume keeps the pause.
    await _call(campus, "accept", "set_notifications", {"paused": True})
    paused = await _rows(campus)
    answer, asked = await _call(campus, "decline", "set_notifications", {"paused": False})
    assert asked == [
        "Turn your reminders on again: every event gets the reminders of its settings.\nNow your reminders are paused until you turn them on."
    ]
    assert answer["result"] == "unchanged" and answer["paused"] is True
    assert await _rows(campus) == paused


async def test_a_university_color_removes_the_category_colors_and_counts_them(campus: CampusHarness) -> None:
    for category, extra in (("holiday", {}), ("career_fair", {"reminders": [{"minutes": 30}]}), ("athletics", {})):
        answer, _asked = await _call(
            campus,
            "accept",
            "update_calendar_settings",
            {"level": f"university_events:{category}", "color": "lavender", **extra},
        )
        assert answer["result"] == "created"
    # Declined: the question counts the three, nothing goes.
    before = await _rows(campus)
    answer, asked = await _call(
        campus, "decline", "update_calendar_settings", {"level": "university_events", "color": "graphite"}
    )
    assert "This removes the colors of 3 university event categories." in asked[0]
    assert answer["result"] == "unchanged" and answer["category_colors_removed"] == 0
    assert await _rows(campus) == before
    answer, asked = await _call(
        campus, "accept", "update_calendar_settings", {"level": "university_events", "color": "graphite"}
    )
    assert "This removes the colors of 3 university event categories." in asked[0]
    assert (answer["result"], answer["category_colors_removed"]) == ("created", 3)
    async with campus.sessions() as session:
        left = {
            row.level: (row.color, row.reminders)
            for row in await session.scalars(select(LevelSetting).where(LevelSetting.level.like("university_events%")))
        }
    # A category left with nothing set goes; one with reminders keeps them without its color.
    assert left == {"university_events": ("graphite", None), "university_events:career_fair": (None, [30])}
    # The same color again, no category color left: nothing to ask, nothing removed.
    answer, asked = await _call(
        campus, "accept", "update_calendar_settings", {"level": "university_events", "color": "graphite"}
    )
    assert asked == [] and (answer["result"], answer["category_colors_removed"]) == ("unchanged", 0)
    # One category color: the question says it in the singular.
    await _call(campus, "accept", "update_calendar_settings", {"level": "university_events:holiday", "color": "sage"})
    answer, asked = await _call(
        campus, "accept", "update_calendar_settings", {"level": "university_events", "color": "graphite"}
    )
    assert "This removes the colors of 1 university event category." in asked[0]
    assert (answer["result"], answer["category_colors_removed"]) == ("updated", 1)


async def test_the_question_says_the_end_of_a_pause_in_the_campus_time_zone(campus: CampusHarness) -> None:
    paused, _asked = await _call(campus, "accept", "set_notifications", {"paused": True, "minutes": 90})
    _answer, asked = await _call(campus, "decline", "set_notifications", {"paused": False})
    local = datetime.fromisoformat(paused["paused_until"]).astimezone(ZoneInfo(campus.settings.timezone))
    hour = local.strftime("%I").lstrip("0")
    when = f"{local:%A, %B} {local.day}, {hour}:{local:%M %p} ({campus.settings.timezone} time)"
    assert asked[0].endswith(f"\nNow your reminders are paused until {when}.") and "UTC" not in asked[0]
