"""Demo settings for student1 (issue 12): a lab color, a title template for all classes, and a
class setting on their first class meeting, so every level of the resolver shows on the demo."""

from __future__ import annotations

from campus_catalog.api import MeetingTime
from campus_mcp import utcnow
from campus_schedule.models import Enrollment
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.models import ClassSetting, LevelSetting


async def first_meeting_id(session: AsyncSession, student_id: int) -> int | None:
    return await session.scalar(
        select(MeetingTime.id)
        .join(Enrollment, Enrollment.section_id == MeetingTime.section_id)
        .where(Enrollment.student_id == student_id)
        .order_by(Enrollment.term_uid.desc(), MeetingTime.id)
        .limit(1)
    )


async def load_demo_settings(session: AsyncSession, scale: int = 1) -> None:
    student = (await session.execute(text("SELECT id FROM students WHERE username = 'student1'"))).scalar()
    if student is None:
        return
    now = utcnow()
    session.add(LevelSetting(student_id=student, level="laboratory", color="basil", version=1, updated_at=now))
    session.add(
        LevelSetting(
            student_id=student,
            level="all_classes",
            title_template="{{course_code}} {{type}} in {{room}}",
            version=1,
            updated_at=now,
        )
    )
    meeting = await first_meeting_id(session, student)
    if meeting is not None:
        session.add(
            ClassSetting(
                student_id=student,
                meeting_time_id=meeting,
                color="tomato",
                reminders=[10, 60],
                version=1,
                updated_at=now,
            )
        )
    # The loaders share one transaction (host demo.py): flush, never commit.
    await session.flush()
