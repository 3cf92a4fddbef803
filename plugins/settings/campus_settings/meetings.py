"""The student's own class meetings: a class setting is keyed on one, so it must be one of theirs."""

from __future__ import annotations

import json
from typing import Any

from campus_catalog.api import (
    Course,
    Instructor,
    MeetingTime,
    Section,
    SectionInstructor,
    Term,
    hhmm,
    json_list_text,
    resolve_term,
)
from campus_mcp import NotFound, Settings
from campus_schedule.models import Enrollment
from campus_schedule.schemas import twelve_hour
from sqlalchemy import Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.class_meeting import ClassMeeting
from campus_settings.resolver import DAY_NAMES
from campus_settings.schemas import ClassMeetingRef

NOT_YOURS = (
    "meeting_time_id {id} is not one of your class meetings. Call my_courses: each weekly meeting of "
    "your courses has its meeting_time_id (one per day of a course)."
)


def _meetings_select(dialect: str) -> Select[*tuple[Any, ...]]:
    """The student's meetings among the ids ``ids``, each with its section, course, term and its
    instructors (a JSON array from a correlated subquery): one statement."""
    teachers = (
        select(json_list_text(dialect, SectionInstructor.is_primary, Instructor.name))
        .join(Instructor, Instructor.id == SectionInstructor.instructor_id)
        .where(SectionInstructor.section_id == Section.id)
        .correlate(Section)
        .scalar_subquery()
    )
    return (
        select(
            MeetingTime.id,
            Section.id,
            Section.crn,
            Section.title,
            Section.schedule_type,
            Section.section_number,
            Section.credits_min,
            Section.credits_max,
            Course.subject_code,
            Course.course_number,
            Course.title,
            Term.name,
            teachers,
            MeetingTime.weekday,
            MeetingTime.start_minute,
            MeetingTime.end_minute,
            MeetingTime.building,
            MeetingTime.building_name,
            MeetingTime.room,
        )
        .join(Section, Section.id == MeetingTime.section_id)
        .join(Course, Course.id == Section.course_id)
        .join(Term, Term.id == Section.term_id)
        .join(Enrollment, Enrollment.section_id == Section.id)
        .where(Enrollment.student_id == bindparam("student_id"), MeetingTime.id.in_(bindparam("ids", expanding=True)))
    )


# _meetings_select per dialect, built once.
_selects: dict[str, Select[*tuple[Any, ...]]] = {}


def _meeting(row: Any) -> ClassMeeting:
    (meeting_id, section_id, crn, title, schedule_type, number, low, high, subject, course_number) = row[:10]
    course_title, term, teachers = row[10:13]
    decoded = json.loads(teachers) if isinstance(teachers, str) else (teachers or [])
    ordered = sorted(decoded, key=lambda t: (not t[0], t[1]))
    return ClassMeeting(
        meeting_time_id=meeting_id,
        section_id=section_id,
        crn=crn,
        course_code=f"{subject} {course_number}",
        title=title or course_title,
        schedule_type=schedule_type,
        subject=subject,
        course_number=course_number,
        section_number=number,
        instructors=tuple(name for _primary, name in ordered),
        term=term,
        credits=high if high is not None else low,
        weekday=row[13],
        start_minute=row[14],
        end_minute=row[15],
        building=row[16],
        building_name=row[17],
        room=row[18],
    )


async def meetings_by_id(
    session: AsyncSession, student_id: int, meeting_time_ids: list[int]
) -> dict[int, ClassMeeting]:
    """The student's meetings among ``meeting_time_ids`` (others are left out), in one statement
    (it was two, and nine more for the ORM load of the sections)."""
    if not meeting_time_ids:
        return {}
    dialect = session.get_bind().dialect.name
    statement = _selects.get(dialect)
    if statement is None:
        statement = _selects[dialect] = _meetings_select(dialect)
    rows = await session.execute(statement, {"student_id": student_id, "ids": list(meeting_time_ids)})
    found = {meeting.meeting_time_id: meeting for meeting in map(_meeting, rows)}
    return {i: found[i] for i in meeting_time_ids if i in found}


async def my_meeting(session: AsyncSession, student_id: int, meeting_time_id: int) -> ClassMeeting:
    """The student's meeting of ``meeting_time_id``; the same NotFound for a meeting of someone
    else's course and for an id nobody has."""
    found = (await meetings_by_id(session, student_id, [meeting_time_id])).get(meeting_time_id)
    if found is None:
        raise NotFound(NOT_YOURS.format(id=meeting_time_id))
    return found


async def first_meeting(session: AsyncSession, student_id: int, settings: Settings) -> ClassMeeting | None:
    """The student's first class meeting of the current term (else of any term), for a preview."""
    from campus_schedule.enrollment import enrolled_sections, enrolled_terms

    terms = await enrolled_terms(session, student_id)
    if not terms:
        return None
    try:
        current = await resolve_term(session, None, settings)
        order = [current, *[t for t in terms if t.uid != current.uid]]
    except NotFound:
        order = terms
    for term in order:
        for section in await enrolled_sections(session, student_id, term.uid):
            if section.meeting_times:
                first = min(section.meeting_times, key=lambda m: (m.weekday if m.weekday is not None else 9, m.id))
                return ClassMeeting.of(section, first)
    return None


def meeting_ref(meeting: ClassMeeting) -> ClassMeetingRef:
    return ClassMeetingRef(
        meeting_time_id=meeting.meeting_time_id,
        crn=meeting.crn,
        course_code=meeting.course_code,
        title=meeting.title,
        schedule_type=meeting.schedule_type,
        day=None if meeting.weekday is None else DAY_NAMES[meeting.weekday],
        start_time=twelve_hour(hhmm(meeting.start_minute)),
        term=meeting.term,
    )


def meeting_words(meeting: ClassMeeting) -> str:
    """ "COMP 2350 Lecture, Monday 10:00 AM (CRN 21345, Fall 2026)" for a confirmation message."""
    ref = meeting_ref(meeting)
    when = " ".join(part for part in (ref.day, ref.start_time) if part) or "no set day"
    kind = f" {ref.schedule_type}" if ref.schedule_type else ""
    return f"{ref.course_code}{kind}, {when} (CRN {ref.crn}, {ref.term})"
