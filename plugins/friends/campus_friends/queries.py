"""The friends queries. The MCP tools and their REST twins both call these, and nothing else does."""

from __future__ import annotations

from collections.abc import Callable

from campus_catalog.api import campus_moment
from campus_mcp import student_text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.friendships import friendships_and_onboarded
from campus_friends.models import ACCEPTED
from campus_friends.schemas import Friend, FriendList, FriendRequest
from campus_friends.students import student_names


async def list_friends(
    session: AsyncSession, student_id: int, timezone: str, onboarded: Callable[[bool], None] | None = None
) -> FriendList:
    """``onboarded``: told whether the student takes any section, when the read says it."""
    rows, takes_sections = await friendships_and_onboarded(session, student_id)
    if onboarded is not None and takes_sections is not None:
        onboarded(takes_sections)
    names = await student_names(session, (row.other(student_id) for row in rows))
    friends: list[Friend] = []
    received: list[FriendRequest] = []
    sent: list[FriendRequest] = []
    for row in rows:
        other = names.get(row.other(student_id))
        if other is None:
            continue  # the other student's account is being deleted (its rows cascade)
        if row.status == ACCEPTED:
            friends.append(
                Friend(
                    friend_id=other.id,
                    username=other.username,
                    display_name=student_text(other.display_name),
                    friends_since=campus_moment(row.accepted_at, timezone)[0],
                    friends_since_text=campus_moment(row.accepted_at, timezone)[1],
                )
            )
            continue
        request = FriendRequest(
            request_id=row.id,
            username=other.username,
            display_name=student_text(other.display_name),
            sent_at=row.created_at,
        )
        (sent if row.requester_id == student_id else received).append(request)
    friends.sort(key=lambda f: (f.display_name.untrusted_text.lower(), f.friend_id))
    return FriendList(friends=friends, requests_received=received, requests_sent=sent)
