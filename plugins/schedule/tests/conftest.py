"""A small campus for the schedule tests: three demo students, a past, a current and a next term
around today, and a fixed Fall 2030 term whose weeks cross the end of daylight saving time
(Sunday, November 3, 2030) with Veterans Day (Monday, November 11) off.

Students are inserted as demo students, so in demo mode a page test signs in as ``student1``
with the demo password, exactly as a student of the demo campus does.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from campus_catalog.models import (
    Course,
    FinalExam,
    FinalsSchedule,
    Instructor,
    MeetingTime,
    Section,
    SectionInstructor,
    Subject,
    Term,
    UniversityEvent,
)
from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

STUDENTS = ("student1", "student2", "student3")
SYNCED = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def weekly(section: Section, days: str, start: int, end: int, **extra: object) -> None:
    for letter in days:
        section.meeting_times.append(
            MeetingTime(weekday="MTWRFSU".index(letter), start_minute=start, end_minute=end, **extra)  # type: ignore[arg-type]
        )


async def add_students(session: AsyncSession) -> dict[str, int]:
    ids: dict[str, int] = {}
    for number, name in enumerate(STUDENTS, start=1):
        await session.execute(
            text(
                "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
                "VALUES (:u, :d, :e, :demo, :now, 0)"
            ),
            {"u": name, "d": f"Demo Student {number}", "e": f"{name}@example.edu", "demo": True, "now": SYNCED},
        )
        ids[name] = int(
            (await session.execute(text("SELECT id FROM students WHERE username = :u"), {"u": name})).scalar_one()
        )
    return ids


async def seed_schedule_catalog(session: AsyncSession, today: date) -> None:
    session.add(Subject(code="COMP", name="Computer Science", school="School of Computing"))
    session.add(Subject(code="MATH", name="Mathematics", school="School of Sciences"))
    await session.flush()
    comp = Course(subject_code="COMP", course_number="1000", title="Computer Science I", credits_min=4, credits_max=4)
    lab = Course(
        subject_code="COMP", course_number="1000L", title="Computer Science I Lab", credits_min=0, credits_max=0
    )
    math = Course(
        subject_code="MATH", course_number="1750", title="Engineering Calculus I", credits_min=4, credits_max=4
    )
    session.add_all([comp, lab, math])
    teacher = Instructor(pub_id="ada-lovelace", name="Ada Lovelace", department="Computing")
    session.add(teacher)
    past = Term(
        uid="202630", name="Summer 2026", start_date=today - timedelta(days=200), end_date=today - timedelta(days=120)
    )
    current = Term(
        uid="202710",
        name="Fall 2026",
        start_date=today - timedelta(days=60),
        end_date=today + timedelta(days=40),
        sections_synced_at=SYNCED,
    )
    upcoming = Term(
        uid="202720", name="Spring 2027", start_date=today + timedelta(days=60), end_date=today + timedelta(days=160)
    )
    dst = Term(uid="203110", name="Fall 2030", start_date=date(2030, 9, 3), end_date=date(2030, 12, 20))
    session.add_all([past, current, upcoming, dst])
    await session.flush()

    def section(term: Term, course: Course, crn: str, number: str, **extra: object) -> Section:
        made = Section(term_id=term.id, course_id=course.id, crn=crn, section_number=number, **extra)  # type: ignore[arg-type]
        made.instructor_links.append(SectionInstructor(instructor_id=teacher.id, is_primary=True))
        session.add(made)
        return made

    lecture = section(
        current, comp, "21001", "01", schedule_type="Lecture", linked_crns=["21002"], banner_synced_at=SYNCED
    )
    weekly(lecture, "MW", 600, 650, building="WENTW", room="010", meeting_type="Class")
    lab_section = section(current, lab, "21002", "L1", schedule_type="Laboratory", linked_crns=["21001"])
    weekly(lab_section, "R", 840, 950, building="BEATY", room="402", meeting_type="Lab")
    calc = section(current, math, "21003", "02", schedule_type="Lecture")
    weekly(calc, "MW", 620, 710, building="IRA", room="201", meeting_type="Class")  # overlaps COMP 1000 by 30 min
    section(current, math, "21004", "03", schedule_type="Lecture", cancelled=True)
    old = section(past, math, "31001", "01", schedule_type="Lecture")
    weekly(old, "TR", 480, 570)
    nxt = section(upcoming, comp, "41001", "01", schedule_type="Lecture")
    weekly(nxt, "TR", 600, 690)
    fall = section(dst, comp, "51001", "01", schedule_type="Lecture")
    weekly(fall, "MW", 600, 650, building="WENTW", room="010", meeting_type="Class")
    await session.flush()
    schedule = FinalsSchedule(term_id=dst.id, source_name="finals.pdf", status="completed", loaded_at=SYNCED)
    session.add(schedule)
    await session.flush()
    session.add(
        FinalExam(
            schedule_id=schedule.id,
            term_id=dst.id,
            crn="51001",
            exam_date=date(2030, 12, 17),
            start_minute=540,
            end_minute=660,
            building="WENTW",
            room="010",
        )
    )
    current_finals = FinalsSchedule(term_id=current.id, source_name="finals.pdf", status="completed", loaded_at=SYNCED)
    session.add(current_finals)
    await session.flush()
    session.add(
        FinalExam(
            schedule_id=current_finals.id,
            term_id=current.id,
            course_code="COMP 1000",
            exam_date=current.end_date - timedelta(days=2),
            start_minute=780,
            end_minute=900,
            room="100",
            building="WENTW",
        )
    )
    session.add(
        UniversityEvent(
            source_uid="vets-2030",
            title="Veterans Day (no classes)",
            start_date=date(2030, 11, 11),
            end_date=date(2030, 11, 11),
            category="holiday",
        )
    )
    session.add(
        UniversityEvent(
            source_uid="finals-2030",
            title="Fall 2030 final exams week",
            start_date=date(2030, 12, 16),
            end_date=date(2030, 12, 20),
            category="finals",
        )
    )
    await session.commit()


@pytest.fixture
async def schedule_campus(campus_factory: CampusFactory) -> CampusHarness:
    # Seed 000's "apply" (a client that cannot ask changes at once): these tests are about the
    # schedule, not the confirmation (tests/mcp/test_confirmation_in_band.py).
    harness = await campus_factory(plugins=["catalog", "schedule"], demo=False, confirmation_fallback="apply")
    async with harness.sessions() as session:
        await add_students(session)
        await session.commit()
        await seed_schedule_catalog(session, campus_today(harness.settings.timezone))
    return harness


@pytest.fixture
async def ids(schedule_campus: CampusHarness) -> dict[str, int]:
    """The students' ids by username."""
    async with schedule_campus.sessions() as session:
        rows = await session.execute(text("SELECT username, id FROM students"))
        return {name: int(number) for name, number in rows}
