"""What the friends family holds about one student, for the student's export (``register_student_data``):
each friendship and request, with the other student as friends see them (their name, and a local
account's username; never a campus id), and the student's own friend code."""

from __future__ import annotations

from typing import Any

from campus_mcp import StudentData
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.codes import shown
from campus_friends.models import FriendCode, Friendship
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
            "student": name.display_name if (name := names.get(pair.other(student_id))) else None,
            "username": name.username if name else None,
            "status": pair.status,
            "asked_by": "you" if pair.requester_id == student_id else "them",
            "since": pair.created_at.isoformat(),
            "accepted_at": pair.accepted_at.isoformat() if pair.accepted_at else None,
        }
        for pair in pairs
    ]


async def code_of(session: AsyncSession, student_id: int) -> str | None:
    code = await session.scalar(select(FriendCode.code).where(FriendCode.student_id == student_id))
    return shown(code) if code else None


STUDENT_DATA = [
    StudentData(
        key="friends",
        description="Friends and friend requests, with the other student.",
        read=friends_of,
        tables=("friendships",),
    ),
    StudentData(
        key="friend_code",
        description="The friend code the student gives friends to send them a request.",
        read=code_of,
        tables=("friend_codes",),
    ),
]
