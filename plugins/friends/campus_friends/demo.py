"""The demo campus's friends: student1, student2 and student3 are friends (the schedule family
gives them shared sections, so their busy times overlap), student4 has asked student1, student1
has asked student5, and student1 has a study meeting with student2 this week."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from campus_mcp import Settings, utcnow
from campus_schedule.events import create_event
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.models import ACCEPTED, PENDING, Friendship

# (requester, other, status): demo student numbers are their ids (the host's demo loader).
DEMO_FRIENDSHIPS = (
    (1, 2, ACCEPTED),
    (3, 1, ACCEPTED),
    (2, 3, ACCEPTED),
    (4, 1, PENDING),
    (1, 5, PENDING),
)


def demo_loader(settings: Settings) -> Callable[[AsyncSession, int], Awaitable[None]]:
    async def load_demo_friends(session: AsyncSession, scale: int) -> None:
        # ``scale`` multiplies students for benchmarks; the friend circle stays the same few.
        now = utcnow()
        for requester, other, status in DEMO_FRIENDSHIPS:
            low, high = sorted((requester, other))
            session.add(
                Friendship(
                    low_student_id=low,
                    high_student_id=high,
                    requester_id=requester,
                    status=status,
                    created_at=now,
                    accepted_at=now if status == ACCEPTED else None,
                )
            )
        await session.flush()
        zone = ZoneInfo(settings.timezone)
        today = date.today()
        wednesday = today + timedelta(days=(2 - today.weekday()) % 7)
        await create_event(
            session,
            owner_id=1,
            title="Study group",
            start=datetime.combine(wednesday, time(18, 0), tzinfo=zone),
            end=datetime.combine(wednesday, time(19, 30), tzinfo=zone),
            attendee_ids=[2],
        )

    return load_demo_friends
