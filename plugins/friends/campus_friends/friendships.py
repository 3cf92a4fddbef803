"""Friend requests and friendships: send by friend code (or a local account's username), accept,
decline, remove.

Every function takes the signed-in student's id and only ever changes or reads a row that student
is part of; they flush and leave the commit to the caller (a dashboard form post). A failure is a
:class:`campus_mcp.InvalidInput` whose message says what was wrong and what to do, for the page
to show.
"""

from __future__ import annotations

from dataclasses import dataclass

from campus_mcp import MAX_ROW_ID, InvalidInput, utcnow
from campus_schedule.models import Enrollment
from sqlalchemy import bindparam, delete, exists, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.codes import student_with_code
from campus_friends.models import ACCEPTED, PENDING, Friendship
from campus_friends.students import StudentName, student_named, student_names

MAX_USERNAME = 150


def possible_id(value: int) -> bool:
    # A bigger id than an integer column holds is one nobody has: it must get that answer, not a
    # database error for comparing an int4 with it (and not a refusal that tells it apart).
    return 1 <= value <= MAX_ROW_ID


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


# The two reads of every friends answer, built once (a statement built per call, with its cache
# key, was a good part of a small answer's CPU). The tools' reads carry whether the student
# (student_id) takes any section, which their page links ask (the onboarded rule,
# campus_schedule.call_readings): one statement less per call than reading it again.
_ONBOARDED = exists().where(Enrollment.student_id == bindparam("student_id")).label("onboarded")
_PAIR = (Friendship.low_student_id == bindparam("low"), Friendship.high_student_id == bindparam("high"))
_BETWEEN = select(Friendship).where(*_PAIR)
_BETWEEN_ONBOARDED = select(Friendship, _ONBOARDED).where(*_PAIR)
_OF = (
    select(Friendship, _ONBOARDED)
    .where(
        or_(Friendship.low_student_id == bindparam("student_id"), Friendship.high_student_id == bindparam("student_id"))
    )
    .order_by(Friendship.id)
)


async def _between(session: AsyncSession, a: int, b: int) -> Friendship | None:
    low, high = _pair(a, b)
    found: Friendship | None = await session.scalar(_BETWEEN, {"low": low, "high": high})
    return found


async def friendships_and_onboarded(session: AsyncSession, student_id: int) -> tuple[list[Friendship], bool | None]:
    """Every row the student is part of, pending or accepted, oldest first; and whether the student
    takes any section (None: no row to tell it)."""
    rows = (await session.execute(_OF, {"student_id": student_id})).all()
    return [row[0] for row in rows], (bool(rows[0][1]) if rows else None)


async def friendships_of(session: AsyncSession, student_id: int) -> list[Friendship]:
    """Every row the student is part of, pending or accepted, oldest first."""
    return (await friendships_and_onboarded(session, student_id))[0]


async def friend_and_onboarded(session: AsyncSession, student_id: int, other_id: int) -> tuple[bool, bool | None]:
    """Whether the two are friends, and whether the student takes any section (None: not read).

    Friends only for an accepted friendship: a pending request, a removed friend, the student
    themself and an id nobody has all give False, the same way."""
    if student_id == other_id or not possible_id(other_id):
        return False, None
    low, high = _pair(student_id, other_id)
    row = (await session.execute(_BETWEEN_ONBOARDED, {"low": low, "high": high, "student_id": student_id})).first()
    if row is None:
        return False, None
    return row[0].status == ACCEPTED, bool(row[1])


async def friend_ids(session: AsyncSession, student_id: int) -> set[int]:
    return {row.other(student_id) for row in await friendships_of(session, student_id) if row.status == ACCEPTED}


@dataclass(frozen=True)
class RequestOutcome:
    """What sending a request did: ``accepted`` when the other student had already asked.
    ``student`` is None when the answer must not tell whether the code or username exists."""

    student: StudentName | None
    accepted: bool


async def student_to_ask(session: AsyncSession, friend: str) -> StudentName | None:
    """The student ``friend`` names: the owner of that friend code, else the local account with
    that username (campus_friends.codes: a campus account is found by its code only)."""
    by_code = await student_with_code(session, friend)
    if by_code is not None:
        return (await student_names(session, [by_code])).get(by_code)
    return await student_named(session, friend)


async def send_request(session: AsyncSession, student_id: int, friend: str) -> RequestOutcome:
    """Ask the student ``friend`` names (a friend code, or a local account's username)."""
    name = friend.strip()
    if not name:
        raise InvalidInput("Type the friend code your friend gave you (or their username).", field="friend")
    if len(name) > MAX_USERNAME:
        raise InvalidInput(
            f"A friend code is 8 letters and digits (a username at most {MAX_USERNAME} characters); check it.",
            field="friend",
        )
    other = await student_to_ask(session, name)
    if other is None:
        # The same answer as a request sent: a form that told which codes or usernames exist would
        # list the campus's students to anyone signed in (issue 30). Nothing is stored.
        return RequestOutcome(student=None, accepted=False)
    if other.id == student_id:
        raise InvalidInput("That is you: type the friend code your friend gave you.", field="friend")
    existing = await _between(session, student_id, other.id)
    if existing is None:
        low, high = _pair(student_id, other.id)
        try:
            async with session.begin_nested():
                session.add(
                    Friendship(low_student_id=low, high_student_id=high, requester_id=student_id, status=PENDING)
                )
            return RequestOutcome(student=other, accepted=False)
        except IntegrityError:
            # The other student asked at the same moment and their row won the unique pair:
            # read it (committed now) and answer as if it had been there first.
            existing = await _between(session, student_id, other.id)
            if existing is None:
                raise
    return await _answer_existing(session, existing, student_id, other)


async def _answer_existing(
    session: AsyncSession, existing: Friendship, student_id: int, other: StudentName
) -> RequestOutcome:
    if existing.status == ACCEPTED:
        raise InvalidInput(f"{other.display_name} is already your friend.", field="friend")
    if existing.requester_id == student_id:
        # Asking again answers as the first time did (and as an unknown username does), so a
        # second try cannot tell a real username from a typo; the request still waits.
        return RequestOutcome(student=None, accepted=False)
    # They had asked first: asking back is saying yes.
    existing.status = ACCEPTED
    existing.accepted_at = utcnow()
    await session.flush()
    return RequestOutcome(student=other, accepted=True)


async def accept_request(session: AsyncSession, student_id: int, request_id: int) -> int:
    """Accept a request sent to ``student_id``; the new friend's id."""
    row = await session.get(Friendship, request_id) if possible_id(request_id) else None
    if row is None or row.status != PENDING or row.other(row.requester_id) != student_id:
        raise InvalidInput(
            "That friend request is no longer waiting (it was answered or withdrawn). Reload Friends.",
            field="request_id",
        )
    row.status = ACCEPTED
    row.accepted_at = utcnow()
    await session.flush()
    return row.requester_id


async def decline_request(session: AsyncSession, student_id: int, request_id: int) -> bool:
    """Decline a request sent to ``student_id``, or withdraw one the student sent (True)."""
    row = await session.get(Friendship, request_id) if possible_id(request_id) else None
    if row is not None and row.status == PENDING and student_id in (row.low_student_id, row.high_student_id):
        withdrawn = row.requester_id == student_id
        await session.delete(row)
        await session.flush()
        return withdrawn
    raise InvalidInput(
        "That friend request is no longer waiting (it was answered or withdrawn). Reload Friends.", field="request_id"
    )


async def remove_friend(session: AsyncSession, student_id: int, friend_id: int) -> bool:
    """End an accepted friendship; from the next call on, neither sees the other's busy times."""
    if not possible_id(friend_id):
        return False
    low, high = _pair(student_id, friend_id)
    result = await session.execute(
        delete(Friendship).where(
            Friendship.low_student_id == low, Friendship.high_student_id == high, Friendship.status == ACCEPTED
        )
    )
    return bool(getattr(result, "rowcount", 0))
