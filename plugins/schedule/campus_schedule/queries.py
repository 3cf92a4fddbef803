"""The schedule family's queries: one function per tool, each the one call its REST twin makes.

Every function takes the signed-in student's id; nothing here reads another student's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Literal, cast

from campus_catalog.api import (
    DAY_LETTERS,
    Conflict,
    DatedTerm,
    Section,
    SectionParts,
    campus_today,
    choose_term,
    current_and_future,
    exam_out,
    find_conflicts,
    hhmm,
    planned_section,
    row_credits,
    term_ref,
)
from campus_mcp import Settings, student_text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule import busy
from campus_schedule.enrollment import (
    StudentTerm,
    enrolled_courses,
    enrolled_parts,
    enrolled_terms,
    student_terms,
)
from campus_schedule.events import MAX_TITLE
from campus_schedule.schemas import (
    BusyTime,
    BusyTimesQuery,
    CourseRef,
    HistoryCourse,
    HistoryTerm,
    MyBusyTimes,
    MyCourse,
    MyCourseHistory,
    MyCourses,
    MyFinal,
    MyFinals,
    WeeklyMeeting,
    twelve_hour,
)
from campus_schedule.watches import watched_sections

DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
HISTORY_NOTE = (
    "Only the terms the campus has on record for you. Only a completed term's courses are taken; an "
    "in_progress term's are being taken and an upcoming term's are planned. No grades: ask the student "
    "for a grade when a prerequisite needs a minimum grade."
)


def my_course(parts: SectionParts) -> MyCourse:
    """A course of the student's schedule from its rows (``enrollment.enrolled_parts``)."""
    row = parts.row
    meetings = [
        WeeklyMeeting(
            meeting_time_id=m.id,
            day=None if m.weekday is None else DAY_LETTERS[m.weekday],
            day_name=None if m.weekday is None else DAY_NAMES[m.weekday],
            start=hhmm(m.start_minute),
            end=hhmm(m.end_minute),
            start_12h=twelve_hour(hhmm(m.start_minute)),
            end_12h=twelve_hour(hhmm(m.end_minute)),
            start_date=m.start_date,
            end_date=m.end_date,
            building=m.building,
            room=m.room,
            meeting_type=m.meeting_type,
        )
        for m in sorted(parts.meetings, key=lambda m: (m.weekday if m.weekday is not None else 9, m.id))
    ]
    return MyCourse(
        crn=row.crn,
        course_code=f"{row.subject_code} {row.course_number}",
        title=row.title or row.course_title,
        section_number=row.section_number,
        schedule_type=row.schedule_type,
        credits=row_credits(row)[0],
        cancelled=row.cancelled,
        instructors=[t.name for t in sorted(parts.teachers, key=lambda t: (not t.is_primary, t.name))],
        linked_crns=list(row.linked_crns or []),
        meetings=meetings,
    )


def conflicts_of(parts: Sequence[SectionParts]) -> list[Conflict]:
    """The time conflicts between the sections that are not cancelled (the catalog's check)."""
    active = [planned_section(p) for p in parts if not p.row.cancelled]
    return find_conflicts(cast(list[Section], active))


def other_terms_note(enrolled: Sequence[DatedTerm], term: DatedTerm) -> str:
    """The note of a term without the student's courses: the terms that have some (newest first)."""
    if not enrolled:
        return (
            f"You have no courses on record at the campus yet. Add your sections by CRN on the My schedule "
            f"page of the dashboard; nothing is listed for {term.name}."
        )
    listed = ", ".join(f"{t.name} ({t.uid})" for t in enrolled[:6])
    return f"You have no courses in {term.name} ({term.uid}). Terms with your courses: {listed}."


async def term_courses(
    session: AsyncSession,
    student_id: int,
    term: DatedTerm,
    terms: Sequence[StudentTerm] | None = None,
    *,
    timezone: str,
) -> MyCourses:
    """The student's courses of ``term``. ``terms`` (``enrollment.student_terms``), when the caller
    read them, name the terms with courses for a term without; else they are read when needed."""
    parts = await enrolled_parts(session, student_id, term.uid)
    note = None
    if not parts:
        enrolled = [t for t in terms if t.enrolled] if terms is not None else await enrolled_terms(session, student_id)
        note = other_terms_note(enrolled, term)
    return MyCourses(
        term=term_ref(term),
        courses=[my_course(p) for p in parts],
        conflicts=conflicts_of(parts),
        note=note,
        # The news of a seat watch is read here, on the student's next look at the term.
        seat_watches=await watched_sections(session, student_id, term.uid, timezone=timezone),
    )


async def my_courses(
    session: AsyncSession, student_id: int, term: str | None, settings: Settings, terms: Sequence[StudentTerm]
) -> MyCourses:
    """``terms``: ``enrollment.student_terms`` (the caller keeps them for the page links). Two
    statements more: the term's sections, the seat watches."""
    return await term_courses(
        session, student_id, choose_term(terms, term, settings), terms, timezone=settings.timezone
    )


def term_status(term: DatedTerm, today: date) -> Literal["completed", "in_progress", "upcoming"]:
    """Whether the term's courses are taken, being taken or planned, on the campus's ``today``."""
    if term.end_date < today:
        return "completed"
    if term.start_date > today:
        return "upcoming"
    return "in_progress"


async def my_course_history(session: AsyncSession, student_id: int, today: date) -> MyCourseHistory:
    # Two statements: the terms (with the student's), and every course of the student's record.
    terms = [t for t in await student_terms(session, student_id) if t.enrolled]
    courses = await enrolled_courses(session, student_id)
    return MyCourseHistory(
        terms=[
            HistoryTerm(
                term=term_ref(term),
                status=term_status(term, today),
                start_date=term.start_date,
                end_date=term.end_date,
                courses=[
                    HistoryCourse(crn=c.crn, course_code=c.course_code, title=c.title, credits=c.credits)
                    for c in courses.get(term.uid, [])
                ],
            )
            for term in terms
        ],
        note=HISTORY_NOTE,
    )


async def my_finals(session: AsyncSession, student_id: int, term: str | None, settings: Settings) -> MyFinals:
    # Two statements: the terms (with the student's), the term's sections with their exams.
    terms = await student_terms(session, student_id)
    chosen = choose_term(terms, term, settings)
    sections = [p.row for p in await enrolled_parts(session, student_id, chosen.uid, exams=True)]
    sections = [row for row in sections if not row.cancelled]
    finals: list[MyFinal] = []
    without: list[CourseRef] = []
    for section in sections:
        exam = exam_out(section.exam_json)
        title = section.title or section.course_title
        course_code = f"{section.subject_code} {section.course_number}"
        if exam is None:
            without.append(CourseRef(crn=section.crn, course_code=course_code, title=title))
            continue
        finals.append(
            MyFinal(
                crn=section.crn,
                course_code=course_code,
                title=title,
                date=exam.date,
                weekday=f"{exam.date:%A}",
                start=exam.start,
                end=exam.end,
                start_12h=twelve_hour(exam.start),
                end_12h=twelve_hour(exam.end),
                building=exam.building,
                room=exam.room,
            )
        )
    finals.sort(key=lambda f: (f.date, f.start or "", f.course_code))
    note = None if sections else other_terms_note([t for t in terms if t.enrolled], chosen)
    return MyFinals(term=term_ref(chosen), finals=finals, without_final=without, note=note)


async def my_busy_times(
    session: AsyncSession, student_id: int, query: BusyTimesQuery, settings: Settings
) -> MyBusyTimes:
    blocks = await busy.busy_blocks(session, student_id, query.start_date, query.end_date, settings)
    out: list[BusyTime] = []
    for block in blocks:
        start, end = block.start.strftime("%H:%M"), block.end.strftime("%H:%M")
        detail = block.detail
        meeting = block.kind == "meeting"
        out.append(
            BusyTime(
                kind=block.kind,
                start=block.start,
                end=block.end,
                date=block.start.date(),
                start_time=start,
                end_time=end,
                start_12h=twelve_hour(start) or start,
                end_12h=twelve_hour(end) or end,
                # A meeting's title is another student's words: fenced, never free text (issue 30).
                title="Meeting" if meeting else str(detail.get("title") or ""),
                meeting_title=student_text(str(detail.get("title") or ""), limit=MAX_TITLE) if meeting else None,
                course_code=detail.get("course_code"),
                crn=detail.get("crn"),
                room=detail.get("room"),
                instructor=detail.get("instructor"),
            )
        )
    return MyBusyTimes(start_date=query.start_date, end_date=query.end_date, timezone=settings.timezone, busy=out)


def schedule_page_terms(terms: Sequence[StudentTerm], settings: Settings) -> list[StudentTerm]:
    """The terms the My schedule page lists (seed 000, ``ScheduleLoading.terms_for``), of
    ``enrollment.student_terms``: the enrolled current and future terms, or the last 6 enrolled
    terms when there are none."""
    enrolled = [t for t in terms if t.enrolled]
    upcoming = current_and_future(enrolled, campus_today(settings.timezone))
    return upcoming or enrolled[:6]
