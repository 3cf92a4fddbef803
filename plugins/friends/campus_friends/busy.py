"""A friend's busy times: the schedule family's busy blocks, stripped to when and nothing else.

Privacy rules (issue 11):

- only an accepted friend's times are read; for anyone else (a pending request, a removed
  friend, the student themself, an id nobody has) the answer is one fixed error that does not
  repeat the id, so a caller cannot tell those cases apart or probe which ids exist;
- the range is checked before the friendship, so a bad range is answered the same for every id;
- a block keeps only ``start`` and ``end``; overlapping and touching blocks are merged, so neither
  the course detail nor the shape of a lecture-and-lab pair shows.
"""

from __future__ import annotations

from collections.abc import Callable

from campus_mcp import NotFound, Settings
from campus_schedule.busy import busy_blocks, check_range
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.friendships import friend_and_onboarded
from campus_friends.schemas import BusyTime, FriendBusyQuery, FriendBusyTimes

NOT_A_FRIEND = (
    "That friend_id is not one of your friends. friend_busy_times shows only the busy times of a "
    "student who accepted your friend request; call list_friends for your friends' ids."
)


def not_a_friend() -> NotFound:
    return NotFound(NOT_A_FRIEND, field="friend_id")


async def friend_busy_times(
    session: AsyncSession,
    student_id: int,
    query: FriendBusyQuery,
    settings: Settings,
    onboarded: Callable[[bool], None] | None = None,
) -> FriendBusyTimes:
    """``onboarded``: told whether the student takes any section, when the read says it."""
    check_range(query.start_date, query.end_date)
    friend, takes_sections = await friend_and_onboarded(session, student_id, query.friend_id)
    if not friend:
        raise not_a_friend()
    if onboarded is not None and takes_sections is not None:
        onboarded(takes_sections)
    merged: list[BusyTime] = []
    for block in await busy_blocks(session, query.friend_id, query.start_date, query.end_date, settings):
        if merged and block.start <= merged[-1].end:
            if block.end > merged[-1].end:
                merged[-1] = BusyTime.between(merged[-1].start, block.end)
            continue
        merged.append(BusyTime.between(block.start, block.end))
    return FriendBusyTimes(
        friend_id=query.friend_id,
        start_date=query.start_date,
        end_date=query.end_date,
        time_zone=settings.timezone,
        busy=merged,
    )
