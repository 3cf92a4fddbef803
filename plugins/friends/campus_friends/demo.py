"""The demo campus's friends: student1, student2 and student3 are friends (the schedule family
gives them shared sections, so their busy times overlap), student4 has asked student1, student1
has asked student5, and student1 has a study meeting with student2 on this week's Wednesday."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from campus_mcp import Settings, utcnow
from campus_schedule.events import create_event
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.models import ACCEPTED, PENDING, Friendship
from campus_friends.students import student_names

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
        # A demo campus with fewer students (CAMPUS_MCP_DEMO_STUDENTS) keeps the pairs it has.
        present = set(await student_names(session, range(1, 6)))
        for requester, other, status in DEMO_FRIENDSHIPS:
            if not {requester, other} <= present:
                continue
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
        today = datetime.now(zone).date()  # the campus's today, not the server's
        # The Wednesday of this week (Monday to Sunday), so "this week" always shows the meeting.
        wednesday = today - timedelta(days=today.weekday()) + timedelta(days=2)
        if not {1, 2} <= present:
            return
        await create_event(
            session,
            owner_id=1,
            title="Study group",
            start=datetime.combine(wednesday, time(18, 0), tzinfo=zone),
            end=datetime.combine(wednesday, time(19, 30), tzinfo=zone),
            attendee_ids=[2],
        )

    return load_demo_friends
