"""The schedule family's queries: one function per tool, each the one call its REST twin makes.

Every function takes the signed-in student's id; nothing here reads another student's rows.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from campus_catalog.api import (
    DAY_LETTERS,
    Section,
    Term,
    campus_today,
    current_and_future,
    final_exam,
    find_conflicts,
    hhmm,
    resolve_term,
    section_credits,
    term_ref,
)
from campus_mcp import Settings, student_text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule import busy
from campus_schedule.enrollment import enrolled_sections, enrolled_terms
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


def _instructors(section: Section) -> list[str]:
    links = sorted(section.instructor_links, key=lambda link: (not link.is_primary, link.instructor.name))
    return [link.instructor.name for link in links]


def my_course(section: Section) -> MyCourse:
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
        for m in sorted(section.meeting_times, key=lambda m: (m.weekday if m.weekday is not None else 9, m.id))
    ]
    return MyCourse(
        crn=section.crn,
        course_code=section.course.code,
        title=section.title or section.course.title,
        section_number=section.section_number,
        schedule_type=section.schedule_type,
        credits=section_credits(section)[0],
        cancelled=section.cancelled,
        instructors=_instructors(section),
        linked_crns=list(section.linked_crns or []),
        meetings=meetings,
    )


async def _other_terms_note(session: AsyncSession, student_id: int, term: Term) -> str:
    terms = await enrolled_terms(session, student_id)
    if not terms:
        return (
            f"You have no courses on record at the campus yet. Add your sections by CRN on the My schedule "
            f"page of the dashboard; nothing is listed for {term.name}."
        )
    listed = ", ".join(f"{t.name} ({t.uid})" for t in terms[:6])
    return f"You have no courses in {term.name} ({term.uid}). Terms with your courses: {listed}."


async def term_courses(session: AsyncSession, student_id: int, term: Term) -> MyCourses:
    sections = await enrolled_sections(session, student_id, term.uid)
    return MyCourses(
        term=term_ref(term),
        courses=[my_course(s) for s in sections],
        conflicts=find_conflicts([s for s in sections if not s.cancelled]),
        note=None if sections else await _other_terms_note(session, student_id, term),
        # The news of a seat watch is read here, on the student's next look at the term.
        seat_watches=await watched_sections(session, student_id, term.uid),
    )


async def my_courses(session: AsyncSession, student_id: int, term: str | None, settings: Settings) -> MyCourses:
    return await term_courses(session, student_id, await resolve_term(session, term, settings))


def term_status(term: Term, today: date) -> Literal["completed", "in_progress", "upcoming"]:
    """Whether the term's courses are taken, being taken or planned, on the campus's ``today``."""
    if term.end_date < today:
        return "completed"
    if term.start_date > today:
        return "upcoming"
    return "in_progress"


async def my_course_history(session: AsyncSession, student_id: int, today: date) -> MyCourseHistory:
    terms: list[HistoryTerm] = []
    for term in await enrolled_terms(session, student_id):
        sections = await enrolled_sections(session, student_id, term.uid)
        terms.append(
            HistoryTerm(
                term=term_ref(term),
                status=term_status(term, today),
                start_date=term.start_date,
                end_date=term.end_date,
                courses=[
                    HistoryCourse(
                        crn=s.crn,
                        course_code=s.course.code,
                        title=s.title or s.course.title,
                        credits=section_credits(s)[0],
                    )
                    for s in sections
                ],
            )
        )
    return MyCourseHistory(terms=terms, note=HISTORY_NOTE)


async def my_finals(session: AsyncSession, student_id: int, term: str | None, settings: Settings) -> MyFinals:
    chosen = await resolve_term(session, term, settings)
    sections = [s for s in await enrolled_sections(session, student_id, chosen.uid) if not s.cancelled]
    finals: list[MyFinal] = []
    without: list[CourseRef] = []
    for section in sections:
        exam = await final_exam(session, section)
        title = section.title or section.course.title
        if exam is None:
            without.append(CourseRef(crn=section.crn, course_code=section.course.code, title=title))
            continue
        finals.append(
            MyFinal(
                crn=section.crn,
                course_code=section.course.code,
                title=title,
                date=exam.date,
                start=exam.start,
                end=exam.end,
                start_12h=twelve_hour(exam.start),
                end_12h=twelve_hour(exam.end),
                building=exam.building,
                room=exam.room,
            )
        )
    finals.sort(key=lambda f: (f.date, f.start or "", f.course_code))
    note = None if sections else await _other_terms_note(session, student_id, chosen)
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


async def schedule_page_terms(session: AsyncSession, student_id: int, settings: Settings) -> list[Term]:
    """The terms the My schedule page lists (seed 000, ``ScheduleLoading.terms_for``): the enrolled
    current and future terms, or the last 6 enrolled terms when there are none."""
    terms = await enrolled_terms(session, student_id)
    upcoming = current_and_future(terms, campus_today(settings.timezone))
    return upcoming or terms[:6]
