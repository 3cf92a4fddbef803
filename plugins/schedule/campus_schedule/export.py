"""What the schedule family holds about one student, for the student's export (``register_student_data``):
the sections on their schedule, the full sections they watch for a seat and the e-mail of their openings, and the meetings they
made or were invited to."""

from __future__ import annotations

from typing import Any

from campus_mcp import StudentData
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import Enrollment, SeatMail, SeatWatch, StudentEvent, StudentEventAttendee


async def sections_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    rows = await session.scalars(
        select(Enrollment).where(Enrollment.student_id == student_id).order_by(Enrollment.term_uid, Enrollment.crn)
    )
    return [
        {"term": row.term_uid, "crn": row.crn, "added_by": row.source, "added_at": row.created_at.isoformat()}
        for row in rows
    ]


async def seat_watches_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    rows = await session.scalars(
        select(SeatWatch).where(SeatWatch.student_id == student_id).order_by(SeatWatch.term_uid, SeatWatch.crn)
    )
    return [{"term": row.term_uid, "crn": row.crn, "watching_since": row.created_at.isoformat()} for row in rows]


async def seat_mail_of(session: AsyncSession, student_id: int) -> list[dict[str, Any]]:
    rows = await session.execute(
        select(SeatMail, SeatWatch.term_uid, SeatWatch.crn)
        .join(SeatWatch, SeatWatch.id == SeatMail.watch_id)
        .where(SeatMail.student_id == student_id)
        .order_by(SeatMail.id)
    )
    return [
        {
            "term": term,
            "crn": crn,
            "opening": mail.opening,
            "status": mail.status,
            "tries": mail.attempts,
            "sent_at": mail.sent_at.isoformat() if mail.sent_at else None,
            "sent_to": mail.sent_to,
            "last_error": mail.last_error,
        }
        for mail, term, crn in rows
    ]


async def meetings_of(session: AsyncSession, student_id: int) -> dict[str, list[dict[str, Any]]]:
    made = await session.scalars(
        select(StudentEvent).where(StudentEvent.owner_id == student_id).order_by(StudentEvent.starts_at)
    )
    invited = await session.scalars(
        select(StudentEvent)
        .join(StudentEventAttendee, StudentEventAttendee.event_id == StudentEvent.id)
        .where(StudentEventAttendee.student_id == student_id)
        .order_by(StudentEvent.starts_at)
    )

    def meeting(event: StudentEvent) -> dict[str, Any]:
        return {
            "title": event.title,
            "starts_at": event.starts_at.isoformat(),
            "ends_at": event.ends_at.isoformat(),
            "made_at": event.created_at.isoformat(),
        }

    return {"made": [meeting(event) for event in made], "invited_to": [meeting(event) for event in invited]}


STUDENT_DATA = [
    StudentData(
        key="sections",
        description="The sections on the student's schedule, by term.",
        read=sections_of,
        tables=("schedule_enrollments",),
    ),
    StudentData(
        key="seat_watches",
        description="Full sections the student watches for a free seat (watch_section), by term.",
        read=seat_watches_of,
        tables=("schedule_seat_watches",),
    ),
    StudentData(
        key="seat_mail",
        description="The e-mail of each opening of a watched section: when, to which address, or why not.",
        read=seat_mail_of,
        tables=("schedule_seat_mail",),
    ),
    StudentData(
        key="meetings",
        description="Meetings the student made or was invited to.",
        read=meetings_of,
        tables=("schedule_events", "schedule_event_attendees"),
    ),
]
