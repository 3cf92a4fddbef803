"""Example calls of the settings tools; the host's contract runs them through a real MCP client.

Demo examples run on the demo campus as student1 (who has settings there, ``demo.py``). A write
tool's examples run on a fresh campus each, so their ``prepare`` may add rows: a class meeting
with a known id on one of student1's sections, since the tools take a ``meeting_time_id``. The
sparse ones run on the schedule family's sparse campus (a meeting with no day, time or room).
"""

from __future__ import annotations

from typing import Any

from campus_catalog.api import MeetingTime, Section
from campus_mcp import ToolExample, utcnow
from campus_schedule.examples import add_sparse_schedule
from campus_schedule.models import Enrollment
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

DEMO_MEETING = 990001
SPARSE_MEETING = 990002


async def _student1(session: AsyncSession) -> int:
    return int((await session.execute(text("SELECT id FROM students WHERE username = 'student1'"))).scalar_one())


async def add_demo_meeting(session: AsyncSession) -> None:
    student = await _student1(session)
    section_id = await session.scalar(
        select(Enrollment.section_id).where(Enrollment.student_id == student).order_by(Enrollment.id).limit(1)
    )
    session.add(
        MeetingTime(id=DEMO_MEETING, section_id=section_id, weekday=4, start_minute=540, end_minute=590, room="101")
    )
    await session.commit()


async def add_sparse_settings(session: AsyncSession) -> None:
    from campus_settings.models import ClassSetting

    await add_sparse_schedule(session)
    student = await _student1(session)
    section_id = await session.scalar(select(Section.id).where(Section.crn == "99002"))
    # A meeting with nothing but its section: no day, no time, no room.
    session.add(MeetingTime(id=SPARSE_MEETING, section_id=section_id))
    await session.flush()
    session.add(
        ClassSetting(student_id=student, meeting_time_id=SPARSE_MEETING, reminders=[], version=1, updated_at=utcnow())
    )
    await session.commit()


def _examples() -> dict[str, tuple[ToolExample, ...]]:
    sparse: dict[str, Any] = {"data": "sparse", "prepare": add_sparse_settings}
    demo_meeting: dict[str, Any] = {"prepare": add_demo_meeting}
    return {
        "my_calendar_settings": (
            ToolExample(tool="", arguments={}),
            ToolExample(tool="", arguments={}, **sparse),
        ),
        "preview_template": (
            ToolExample(tool="", arguments={"title_template": "{{course_code}} in {{room}}"}),
            ToolExample(
                tool="", arguments={"meeting_time_id": SPARSE_MEETING, "location_template": "{{room}}"}, **sparse
            ),
        ),
        "update_class_settings": (
            ToolExample(tool="", arguments={"meeting_time_id": DEMO_MEETING, "color": "basil"}, **demo_meeting),
            ToolExample(tool="", arguments={"meeting_time_id": SPARSE_MEETING, "reset": ["reminders"]}, **sparse),
        ),
        "update_calendar_settings": (
            ToolExample(tool="", arguments={"level": "laboratory", "color": "sage"}),
            ToolExample(tool="", arguments={"level": "final_exam", "reminders": [{"hours": 1}]}, **sparse),
        ),
        "set_notifications": (
            ToolExample(tool="", arguments={"paused": True, "hours": 2}),
            ToolExample(tool="", arguments={"paused": False}, **sparse),
        ),
    }


def examples_of(tool: str) -> tuple[ToolExample, ...]:
    return _examples()[tool]
