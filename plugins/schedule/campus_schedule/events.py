"""The students' own events: meetings with friends (the friends family's dashboard makes them).

An event belongs to its owner; its attendees see it among their busy times too. Times are aware
datetimes, stored in UTC; ``busy_blocks`` shows them in the campus time zone.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from campus_mcp import InvalidInput, clean_student_text
from sqlalchemy import BindParameter, bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import StudentEvent, StudentEventAttendee

MAX_TITLE = 200


def meeting_title(event: StudentEvent) -> str:
    """The title as every answer, page and feed shows it: one line, cleaned again on read, since a
    title saved before issue 30 may hold line breaks or control characters (another student wrote
    it, and the attendee's assistant reads it)."""
    return clean_student_text(event.title, limit=MAX_TITLE) or "Meeting"


async def create_event(
    session: AsyncSession,
    *,
    owner_id: int,
    title: str,
    start: datetime,
    end: datetime,
    attendee_ids: Iterable[int],
) -> StudentEvent:
    """Add an event of ``owner_id`` with its attendees (the owner is not listed among them).
    Flushes, does not commit: the caller's transaction decides."""
    # One line, no control, bidirectional or separator character (U+2028/U+2029 included): the
    # title reaches every attendee's assistant (campus_mcp.plugin.untrusted).
    words = clean_student_text(title, limit=MAX_TITLE + 1)
    if not words:
        raise InvalidInput("Give the meeting a title, for example 'Study group'.", field="title")
    if len(words) > MAX_TITLE:
        raise InvalidInput(f"The title is longer than {MAX_TITLE} characters; shorten it.", field="title")
    if start.tzinfo is None or end.tzinfo is None:
        raise InvalidInput("Give the start and end with their time zone (aware datetimes).", field="start")
    if end <= start:
        raise InvalidInput("The meeting ends before it starts; give an end after the start.", field="end")
    event = StudentEvent(owner_id=owner_id, title=words, starts_at=start, ends_at=end)
    session.add(event)
    await session.flush()
    for student_id in dict.fromkeys(attendee_ids):
        if student_id != owner_id:
            session.add(StudentEventAttendee(event_id=event.id, student_id=student_id))
    await session.flush()
    return event


async def delete_event(session: AsyncSession, *, owner_id: int, event_id: int) -> bool:
    """Remove an event, only when ``owner_id`` owns it. False when there is no such event of theirs
    (an attendee cannot delete another student's event). Flushes, does not commit."""
    owned = await session.scalar(
        select(StudentEvent.id).where(StudentEvent.id == event_id, StudentEvent.owner_id == owner_id)
    )
    if owned is None:
        return False
    await session.execute(delete(StudentEventAttendee).where(StudentEventAttendee.event_id == event_id))
    await session.execute(delete(StudentEvent).where(StudentEvent.id == event_id))
    return True


# Built once: a busy-times answer reads it every time.
_STUDENT: BindParameter[int] = bindparam("student_id")
_BETWEEN = (
    select(StudentEvent)
    .where(
        (StudentEvent.owner_id == _STUDENT)
        | StudentEvent.id.in_(select(StudentEventAttendee.event_id).where(StudentEventAttendee.student_id == _STUDENT)),
        StudentEvent.starts_at < bindparam("end"),
        StudentEvent.ends_at > bindparam("start"),
    )
    .order_by(StudentEvent.starts_at, StudentEvent.id)
)


async def events_between(session: AsyncSession, student_id: int, start: datetime, end: datetime) -> list[StudentEvent]:
    """The events ``student_id`` owns or attends that overlap ``[start, end)``, by start."""
    rows = await session.scalars(_BETWEEN, {"student_id": student_id, "start": start, "end": end})
    return list(rows.all())
