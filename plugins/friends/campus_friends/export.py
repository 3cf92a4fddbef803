"""What the friends family holds about one student, for the student's export (``register_student_data``):
each friendship and request, with the other student's username (friends see busy times only)."""

from __future__ import annotations

from typing import Any

from campus_mcp import StudentData
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.models import Friendship
from campus_friends.students import student_names


async def friends_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    pairs = list(
        await session.scalars(
            select(Friendship)
            .where(or_(Friendship.low_student_id == student_id, Friendship.high_student_id == student_id))
            .order_by(Friendship.id)
        )
    )
    names = await student_names(session, [pair.other(student_id) for pair in pairs])
    return [
        {
            "student": name.username if (name := names.get(pair.other(student_id))) else None,
            "status": pair.status,
            "asked_by": "you" if pair.requester_id == student_id else "them",
            "since": pair.created_at.isoformat(),
            "accepted_at": pair.accepted_at.isoformat() if pair.accepted_at else None,
        }
        for pair in pairs
    ]


STUDENT_DATA = [
    StudentData(
        key="friends",
        description="Friends and friend requests, with the other student.",
        read=friends_of,
        tables=("friendships",),
    )
]
