"""The student's own class meetings: a class setting is keyed on one, so it must be one of theirs."""

from __future__ import annotations

from campus_catalog.api import MeetingTime, Section, hhmm, load_sections, resolve_term
from campus_mcp import NotFound, Settings
from campus_schedule.models import Enrollment
from campus_schedule.schemas import twelve_hour
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.resolver import DAY_NAMES
from campus_settings.schemas import ClassMeetingRef

NOT_YOURS = (
    "meeting_time_id {id} is not one of your class meetings. Call my_courses: each weekly meeting of "
    "your courses has its meeting_time_id (one per day of a course)."
)


async def my_meeting(session: AsyncSession, student_id: int, meeting_time_id: int) -> tuple[Section, MeetingTime]:
    """The student's section and meeting of ``meeting_time_id``; the same NotFound for a meeting
    of someone else's course and for an id nobody has."""
    section_id = await session.scalar(
        select(MeetingTime.section_id)
        .join(Enrollment, Enrollment.section_id == MeetingTime.section_id)
        .where(MeetingTime.id == meeting_time_id, Enrollment.student_id == student_id)
    )
    if section_id is None:
        raise NotFound(NOT_YOURS.format(id=meeting_time_id))
    (section,) = await load_sections(session, [section_id])
    meeting = next(m for m in section.meeting_times if m.id == meeting_time_id)
    return section, meeting


async def meetings_by_id(
    session: AsyncSession, student_id: int, meeting_time_ids: list[int]
) -> dict[int, tuple[Section, MeetingTime]]:
    """The student's meetings among ``meeting_time_ids`` (others are left out)."""
    if not meeting_time_ids:
        return {}
    rows = await session.execute(
        select(MeetingTime.id, MeetingTime.section_id)
        .join(Enrollment, Enrollment.section_id == MeetingTime.section_id)
        .where(MeetingTime.id.in_(meeting_time_ids), Enrollment.student_id == student_id)
    )
    pairs = list(rows.all())
    sections = {s.id: s for s in await load_sections(session, sorted({section_id for _id, section_id in pairs}))}
    out: dict[int, tuple[Section, MeetingTime]] = {}
    for meeting_id, section_id in pairs:
        section = sections[section_id]
        out[meeting_id] = (section, next(m for m in section.meeting_times if m.id == meeting_id))
    return out


async def first_meeting(
    session: AsyncSession, student_id: int, settings: Settings
) -> tuple[Section, MeetingTime] | None:
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
                return section, min(
                    section.meeting_times, key=lambda m: (m.weekday if m.weekday is not None else 9, m.id)
                )
    return None


def meeting_ref(section: Section, meeting: MeetingTime) -> ClassMeetingRef:
    return ClassMeetingRef(
        meeting_time_id=meeting.id,
        crn=section.crn,
        course_code=section.course.code,
        title=section.title or section.course.title,
        schedule_type=section.schedule_type,
        day=None if meeting.weekday is None else DAY_NAMES[meeting.weekday],
        start_time=twelve_hour(hhmm(meeting.start_minute)),
        term=section.term.name,
    )


def meeting_words(section: Section, meeting: MeetingTime) -> str:
    """ "COMP 2350 Lecture, Monday 10:00 AM (CRN 21345, Fall 2026)" for a confirmation message."""
    ref = meeting_ref(section, meeting)
    when = " ".join(part for part in (ref.day, ref.start_time) if part) or "no set day"
    kind = f" {ref.schedule_type}" if ref.schedule_type else ""
    return f"{ref.course_code}{kind}, {when} (CRN {ref.crn}, {ref.term})"
