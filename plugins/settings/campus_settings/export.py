"""What the settings family holds about one student, for the student's export (``register_student_data``):
their calendar settings at each level and class, their reminders' pause, and whether the calendar
feed is on (never its secret, which is kept only as a hash anyway)."""

from __future__ import annotations

from typing import Any

from campus_mcp import StudentData
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.feed.tokens import CalendarFeed
from campus_settings.models import FIELDS, ClassSetting, LevelSetting, NotificationSetting


def _fields(row: LevelSetting | ClassSetting) -> dict[str, Any]:
    # Only what the student set: a null field is "not set here" (models.py).
    return {name: value for name in FIELDS if (value := getattr(row, name)) is not None}


async def calendar_settings_of(session: AsyncSession, student_id: int) -> dict[str, Any]:
    levels = await session.scalars(
        select(LevelSetting).where(LevelSetting.student_id == student_id).order_by(LevelSetting.level)
    )
    classes = await session.scalars(
        select(ClassSetting).where(ClassSetting.student_id == student_id).order_by(ClassSetting.meeting_time_id)
    )
    pause = await session.get(NotificationSetting, student_id)
    return {
        "levels": {row.level: _fields(row) | {"updated_at": row.updated_at.isoformat()} for row in levels},
        "classes": [
            {"meeting_time_id": row.meeting_time_id, **_fields(row), "updated_at": row.updated_at.isoformat()}
            for row in classes
        ],
        "reminders_paused": bool(pause and pause.paused),
        "reminders_paused_until": pause.paused_until.isoformat() if pause and pause.paused_until else None,
    }


async def calendar_feed_of(session: AsyncSession, student_id: int) -> dict[str, Any]:
    feed = await session.get(CalendarFeed, student_id)
    return {"on": feed is not None, "on_since": feed.created_at.isoformat() if feed else None}


STUDENT_DATA = [
    StudentData(
        key="calendar_settings",
        description="Calendar settings per level and class, and the reminders' pause.",
        read=calendar_settings_of,
        tables=("settings_level_settings", "settings_class_settings", "settings_notifications"),
    ),
    StudentData(
        key="calendar_feed",
        description="Whether the calendar feed is on, and since when.",
        read=calendar_feed_of,
        tables=("settings_calendar_feeds",),
    ),
]
