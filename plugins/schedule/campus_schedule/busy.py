"""When a student is busy between two dates: classes, finals and meetings, in the campus time zone.

Each weekly meeting is expanded day by day between its own dates (else its term's), and each
class is built as a local wall-clock time with ``zoneinfo``: a 10:00 class is 10:00 on both sides
of a daylight-saving change, and its UTC offset moves instead. No class is placed on a day the
academic calendar marks as a holiday or break, nor in finals week (classes stop for the exams).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from campus_catalog.api import (
    FIRST_CALENDAR_DAY,
    LAST_CALENDAR_DAY,
    Section,
    SectionParts,
    Term,
    UniversityEvent,
    exam_column,
    exam_out,
    parts_of,
    parts_select,
)
from campus_mcp import InvalidInput, Settings
from sqlalchemy import Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.events import events_between, meeting_title
from campus_schedule.models import Enrollment

MAX_DAYS = 120
# Calendar categories on which classes do not meet (the ICS import files breaks under "holiday").
NO_CLASS_CATEGORIES = ("holiday", "finals")

BusyKind = Literal["class", "final", "meeting"]


@dataclasses.dataclass(frozen=True)
class BusyBlock:
    """One busy stretch. ``start``/``end`` are aware, in the campus zone. ``detail`` holds the
    course code, title, CRN, room and instructor of a class or final, or the meeting's title:
    the friends family strips it before showing a friend's blocks."""

    start: datetime
    end: datetime
    kind: BusyKind
    detail: Mapping[str, Any]


def within_calendar(day: date, field: str) -> None:
    """Refuse a day outside the campus calendar's range: a week or a day after 9999-12-31 cannot be
    computed at all (issue 30 found four server errors there)."""
    if not FIRST_CALENDAR_DAY <= day <= LAST_CALENDAR_DAY:
        raise InvalidInput(
            f"{field} {day.isoformat()} is outside the dates this service answers for, "
            f"{FIRST_CALENDAR_DAY.isoformat()} to {LAST_CALENDAR_DAY.isoformat()}: give a day in that range.",
            field=field,
        )


def check_range(start_date: date, end_date: date) -> None:
    within_calendar(start_date, "start_date")
    within_calendar(end_date, "end_date")
    if end_date < start_date:
        raise InvalidInput(
            f"end_date {end_date.isoformat()} is before start_date {start_date.isoformat()}. "
            "Give the earlier date as start_date.",
            field="end_date",
        )
    days = (end_date - start_date).days + 1
    if days > MAX_DAYS:
        raise InvalidInput(
            f"The range is {days} days; ask for at most {MAX_DAYS} days at a time "
            "(several calls cover a longer stretch).",
            field="end_date",
        )


def _at(day: date, minute: int, zone: ZoneInfo) -> datetime:
    # Wall-clock time first, zone second: zoneinfo picks the offset that day has (DST-correct).
    return datetime.combine(day, time(minute // 60, minute % 60), tzinfo=zone)


# The dates of the holidays, breaks and finals weeks that reach the dates, built once.
_NO_CLASS = select(UniversityEvent.start_date, UniversityEvent.end_date).where(
    UniversityEvent.category.in_(NO_CLASS_CATEGORIES),
    UniversityEvent.start_date <= bindparam("end_date"),
    UniversityEvent.end_date >= bindparam("start_date"),
)


async def no_class_days(session: AsyncSession, start_date: date, end_date: date) -> set[date]:
    rows = await session.execute(_NO_CLASS, {"start_date": start_date, "end_date": end_date})
    days: set[date] = set()
    for first, last in rows:
        day = max(first, start_date)
        while day <= min(last, end_date):
            days.add(day)
            day += timedelta(days=1)
    return days


def _instructor(parts: SectionParts) -> str | None:
    teachers = sorted(parts.teachers, key=lambda t: (not t.is_primary, t.name))
    return teachers[0].name if teachers else None


def _course_detail(parts: SectionParts, room: str | None) -> dict[str, Any]:
    row = parts.row
    return {
        "crn": row.crn,
        "course_code": f"{row.subject_code} {row.course_number}",
        "title": row.title or row.course_title,
        "room": room,
        "instructor": _instructor(parts),
    }


def _room(building: str | None, room: str | None) -> str | None:
    text = " ".join(part for part in (building, room) if part)
    return text or None


def class_blocks(
    sections: Sequence[SectionParts], start_date: date, end_date: date, skip: set[date], zone: ZoneInfo
) -> list[BusyBlock]:
    """``sections``: rows of :func:`_sections_overlapping` (with their term's dates)."""
    blocks: list[BusyBlock] = []
    for section in sections:
        if section.row.cancelled:
            continue
        for meeting in section.meetings:
            if meeting.weekday is None or meeting.start_minute is None or meeting.end_minute is None:
                continue  # no fixed day or time (online, TBA): nothing to block
            first = max(meeting.start_date or section.row.term_start_date, start_date)
            last = min(meeting.end_date or section.row.term_end_date, end_date)
            day = first + timedelta(days=(meeting.weekday - first.weekday()) % 7)
            detail = _course_detail(section, _room(meeting.building, meeting.room)) | {
                "meeting_time_id": meeting.id,
                "meeting_type": meeting.meeting_type,
            }
            while day <= last:
                if day not in skip:
                    blocks.append(
                        BusyBlock(
                            start=_at(day, meeting.start_minute, zone),
                            end=_at(day, meeting.end_minute, zone),
                            kind="class",
                            detail=detail,
                        )
                    )
                day += timedelta(days=7)
    return blocks


# The statement of _sections_overlapping per dialect, built once.
_overlapping: dict[str, Select[Any]] = {}


def _overlapping_select(dialect: str) -> Select[Any]:
    return (
        parts_select(dialect)
        .add_columns(
            exam_column(dialect),
            Term.start_date.label("term_start_date"),
            Term.end_date.label("term_end_date"),
        )
        .join(Enrollment, Enrollment.section_id == Section.id)
        .where(
            Enrollment.student_id == bindparam("student_id"),
            Term.start_date <= bindparam("end_date"),
            Term.end_date >= bindparam("start_date"),
        )
    )


async def _sections_overlapping(
    session: AsyncSession, student_id: int, start_date: date, end_date: date
) -> list[SectionParts]:
    """The student's sections of every term that overlaps the dates, each with its meetings,
    instructors, final exam and term dates: one statement (it was the terms, then for each term
    the ORM load of its sections, nine statements, then one per final exam)."""
    dialect = session.get_bind().dialect.name
    statement = _overlapping.get(dialect)
    if statement is None:
        statement = _overlapping[dialect] = _overlapping_select(dialect)
    found = await session.execute(statement, {"student_id": student_id, "start_date": start_date, "end_date": end_date})
    rows = sorted(
        found.all(), key=lambda r: (r.term_start_date, f"{r.subject_code} {r.course_number}", r.section_number, r.crn)
    )
    return parts_of(rows)


def final_blocks(sections: Sequence[SectionParts], start_date: date, end_date: date, zone: ZoneInfo) -> list[BusyBlock]:
    blocks: list[BusyBlock] = []
    for section in sections:
        if section.row.cancelled:
            continue
        exam = exam_out(section.row.exam_json)
        if exam is None or exam.start is None or exam.end is None or not start_date <= exam.date <= end_date:
            continue
        start = _at(exam.date, _minutes(exam.start), zone)
        end = _at(exam.date, _minutes(exam.end), zone)
        blocks.append(
            BusyBlock(
                start=start, end=end, kind="final", detail=_course_detail(section, _room(exam.building, exam.room))
            )
        )
    return blocks


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


async def busy_blocks(
    session: AsyncSession, student_id: int, start_date: date, end_date: date, settings: Settings
) -> list[BusyBlock]:
    """Every busy block of ``student_id`` from ``start_date`` to ``end_date`` (both included, campus
    days), by start. More than 120 days or reversed dates raise :class:`InvalidInput`."""
    check_range(start_date, end_date)
    zone = ZoneInfo(settings.timezone)
    sections = await _sections_overlapping(session, student_id, start_date, end_date)
    skip = await no_class_days(session, start_date, end_date)
    blocks = class_blocks(sections, start_date, end_date, skip, zone)
    blocks += final_blocks(sections, start_date, end_date, zone)
    window_start = _at(start_date, 0, zone)
    window_end = _at(end_date + timedelta(days=1), 0, zone)
    for event in await events_between(session, student_id, window_start, window_end):
        blocks.append(
            BusyBlock(
                start=event.starts_at.astimezone(zone),
                end=event.ends_at.astimezone(zone),
                kind="meeting",
                detail={"title": meeting_title(event), "event_id": event.id, "owner": event.owner_id == student_id},
            )
        )
    return sorted(blocks, key=lambda b: (b.start, b.end, b.kind))
