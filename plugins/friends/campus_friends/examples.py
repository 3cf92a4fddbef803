"""Example calls of the friends tools; the host's contract tests run them through a real MCP client.

The demo examples run as demo ``student1``, whose friends are ``student2`` and ``student3``
(see ``demo.py``). The sparse ones run on an empty campus where only the calling student exists:
no friend at all, and a friend with no course and no meeting (an empty week).
"""

from __future__ import annotations

from datetime import date, timedelta

from campus_mcp import ToolExample
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.models import ACCEPTED, Friendship
from campus_friends.students import add_student, student_named


def _this_week() -> tuple[str, str]:
    monday = date.today() - timedelta(days=date.today().weekday())
    return monday.isoformat(), (monday + timedelta(days=6)).isoformat()


async def add_idle_friend(session: AsyncSession) -> None:
    """student1 (made by the contract before this runs) and a friend with nothing on their schedule."""
    me = await student_named(session, "student1")
    assert me is not None, "the contract creates the example's student before prepare"
    friend = await add_student(session, "idle-friend", "Idle Friend")
    low, high = sorted((me.id, friend))
    session.add(Friendship(low_student_id=low, high_student_id=high, requester_id=me.id, status=ACCEPTED))
    await session.commit()


_MONDAY, _SUNDAY = _this_week()

LIST_EXAMPLES = [
    ToolExample(tool="", arguments={}),
    ToolExample(tool="", arguments={}, data="sparse"),
]

BUSY_EXAMPLES = [
    ToolExample(tool="", arguments={"friend_id": 2, "start_date": _MONDAY, "end_date": _SUNDAY}),
    # On an empty campus student1 is id 1 and the idle friend the next student: id 2.
    ToolExample(
        tool="",
        arguments={"friend_id": 2, "start_date": _MONDAY, "end_date": _SUNDAY},
        data="sparse",
        prepare=add_idle_friend,
    ),
]
