"""Example calls of the schedule tools; the host's contract runs them through a real MCP client.

The demo examples run on the demo campus as ``student1`` (who has a schedule there); the write
tool's run on a campus of their own, so ``add_example_term`` may add a term whose CRNs it knows
(the demo's own CRNs follow its seed). The sparse ones run on an empty campus that ``add_sparse_schedule`` fills with the awkward case: a course
with no instructor and no meeting times, a meeting with no time or room, a cancelled section,
and a final exam with no time.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from campus_catalog.api import Course, FinalExam, FinalsSchedule, MeetingTime, Section, Subject, Term
from campus_mcp import ToolExample
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import Enrollment, SeatWatch

SPARSE_TERM = "209910"
EXAMPLE_TERM = "209920"


def _today() -> date:
    # The contract runs in the campus zone's today; a day either way changes no example.
    return datetime.now(ZoneInfo("America/New_York")).date()


async def add_sparse_schedule(session: AsyncSession) -> None:
    today = _today()
    student = (await session.execute(text("SELECT id FROM students WHERE username = 'student1'"))).scalar_one()
    session.add(Subject(code="SPRS", name="Sparse"))
    await session.flush()
    course = Course(subject_code="SPRS", course_number="1000", title="Bare course")
    term = Term(
        uid=SPARSE_TERM, name="Sparse Term", start_date=today - timedelta(days=30), end_date=today + timedelta(days=60)
    )
    session.add_all([course, term])
    await session.flush()
    bare = Section(term_id=term.id, course_id=course.id, crn="99001", section_number="01")
    untimed = Section(term_id=term.id, course_id=course.id, crn="99002", section_number="02")
    untimed.meeting_times.append(MeetingTime(weekday=None, start_minute=None, end_minute=None))
    untimed.meeting_times.append(MeetingTime(weekday=2, start_minute=600, end_minute=650))
    cancelled = Section(term_id=term.id, course_id=course.id, crn="99003", section_number="03", cancelled=True)
    session.add_all([bare, untimed, cancelled])
    await session.flush()
    schedule = FinalsSchedule(term_id=term.id, status="completed", loaded_at=None)
    session.add(schedule)
    await session.flush()
    session.add(FinalExam(schedule_id=schedule.id, term_id=term.id, crn="99002", exam_date=today + timedelta(days=55)))
    for section in (bare, untimed, cancelled):
        session.add(
            Enrollment(student_id=student, term_uid=term.uid, section_id=section.id, crn=section.crn, source="demo")
        )
    await session.commit()


async def add_example_term(session: AsyncSession) -> None:
    """A term with two sections that overlap on Monday, student1 taking the first of them."""
    today = _today()
    student = (await session.execute(text("SELECT id FROM students WHERE username = 'student1'"))).scalar_one()
    session.add(Subject(code="EXMP", name="Example"))
    await session.flush()
    course = Course(subject_code="EXMP", course_number="1000", title="Example course")
    term = Term(
        uid=EXAMPLE_TERM,
        name="Example Term",
        start_date=today + timedelta(days=200),
        end_date=today + timedelta(days=300),
    )
    session.add_all([course, term])
    await session.flush()
    first = Section(term_id=term.id, course_id=course.id, crn="99101", section_number="01", schedule_type="Lecture")
    first.meeting_times.append(MeetingTime(weekday=0, start_minute=600, end_minute=650, room="101"))
    second = Section(term_id=term.id, course_id=course.id, crn="99102", section_number="02", schedule_type="Lecture")
    second.meeting_times.append(MeetingTime(weekday=0, start_minute=620, end_minute=700))
    session.add_all([first, second])
    await session.flush()
    session.add(Enrollment(student_id=student, term_uid=term.uid, section_id=first.id, crn=first.crn, source="demo"))
    await session.commit()


async def add_example_watch(session: AsyncSession) -> None:
    """The example term, with student1 watching its second (full) section."""
    await add_example_term(session)
    student = (await session.execute(text("SELECT id FROM students WHERE username = 'student1'"))).scalar_one()
    section = (await session.execute(text("SELECT id FROM catalog_sections WHERE crn = '99102'"))).scalar_one()
    session.add(SeatWatch(student_id=student, term_uid=EXAMPLE_TERM, section_id=section, crn="99102"))
    await session.commit()


async def add_sparse_watch(session: AsyncSession) -> None:
    """The sparse schedule, with student1 watching its cancelled section (no seat counts at all)."""
    await add_sparse_schedule(session)
    student = (await session.execute(text("SELECT id FROM students WHERE username = 'student1'"))).scalar_one()
    section = (await session.execute(text("SELECT id FROM catalog_sections WHERE crn = '99003'"))).scalar_one()
    session.add(SeatWatch(student_id=student, term_uid=SPARSE_TERM, section_id=section, crn="99003"))
    await session.commit()


def _examples() -> dict[str, tuple[ToolExample, ...]]:
    today = _today()
    week = {"start_date": today.isoformat(), "end_date": (today + timedelta(days=6)).isoformat()}
    sparse = {"data": "sparse", "prepare": add_sparse_schedule}
    return {
        "my_courses": (
            ToolExample(tool="", arguments={}),
            ToolExample(tool="", arguments={}, user="student2"),
            ToolExample(tool="", arguments={"term": SPARSE_TERM}, **sparse),  # type: ignore[arg-type]
        ),
        "my_course_history": (
            ToolExample(tool="", arguments={}),
            ToolExample(tool="", arguments={}, **sparse),  # type: ignore[arg-type]
        ),
        "my_busy_times": (
            ToolExample(tool="", arguments=week),
            ToolExample(tool="", arguments=week, **sparse),  # type: ignore[arg-type]
        ),
        "my_finals": (
            ToolExample(tool="", arguments={}),
            ToolExample(tool="", arguments={"term": SPARSE_TERM}, **sparse),  # type: ignore[arg-type]
        ),
        "set_my_sections": (
            ToolExample(
                tool="", arguments={"term": EXAMPLE_TERM, "crns": ["99101", "99102"]}, prepare=add_example_term
            ),
            # Drops the cancelled section and keeps the one with no meeting and the one with no time.
            ToolExample(tool="", arguments={"term": SPARSE_TERM, "crns": ["99001", "99002"]}, **sparse),  # type: ignore[arg-type]
        ),
        "watch_section": (
            ToolExample(tool="", arguments={"term": EXAMPLE_TERM, "crn": "99102"}, prepare=add_example_term),
        ),
        "unwatch_section": (
            ToolExample(tool="", arguments={"term": EXAMPLE_TERM, "crn": "99102"}, prepare=add_example_watch),
        ),
        "list_watches": (
            ToolExample(tool="", arguments={}),
            ToolExample(tool="", arguments={"term": SPARSE_TERM}, data="sparse", prepare=add_sparse_watch),
        ),
    }


def examples_of(tool: str) -> tuple[ToolExample, ...]:
    return _examples()[tool]
