"""Which sections a student takes: read, and set from the student's own list of CRNs.

Every entry of a new list is checked before anything changes, so one bad CRN leaves the
schedule as it was, and the error names each bad CRN with the reason (unknown, cancelled, or
in another term) and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from campus_catalog.api import Course, Section, SectionParts, Term, exam_column, load_sections, parts_of, parts_select
from campus_mcp import ChangedMeanwhile, InvalidInput
from sqlalchemy import BindParameter, Select, bindparam, delete, exists, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import Enrollment

# A term holds far fewer sections than this; a longer list is a mistake or an attack.
MAX_TERM_SECTIONS = 20


@dataclass(frozen=True, slots=True)
class StudentTerm:
    """A term of the catalog as a student's schedule sees it: its keys and dates, and whether the
    student has a section in it."""

    id: int
    uid: str
    name: str
    start_date: date
    end_date: date
    enrolled: bool


_STUDENT: BindParameter[int] = bindparam("student_id")
# Built once: every term, newest first, with whether the student takes a section in it.
_STUDENT_TERMS = select(
    Term.id,
    Term.uid,
    Term.name,
    Term.start_date,
    Term.end_date,
    exists().where(Enrollment.student_id == _STUDENT, Enrollment.term_uid == Term.uid).label("enrolled"),
).order_by(Term.start_date.desc())


async def student_terms(session: AsyncSession, student_id: int) -> list[StudentTerm]:
    """Every term of the catalog, newest first, each with whether the student has a section in
    it: in one statement, what choosing a term, the note of a term without courses and the
    schedule page's link need (they were three statements, and two more for the link)."""
    rows = await session.execute(_STUDENT_TERMS, {"student_id": student_id})
    return [StudentTerm(*row[:5], enrolled=bool(row[5])) for row in rows]


# The statements of enrolled_parts per (dialect, with exams), built once.
_parts_by_key: dict[tuple[str, bool], Select[Any]] = {}


async def enrolled_parts(
    session: AsyncSession, student_id: int, term_uid: str, *, exams: bool = False
) -> list[SectionParts]:
    """The student's sections of one term as rows, by course code, section number and CRN: each
    with its course, meetings and instructors (``parts_select``), and with
    ``exams`` its final exam (``exam_json``): one statement, where the ORM load of the sections
    was nine and each final exam one more."""
    dialect = session.get_bind().dialect.name
    statement = _parts_by_key.get((dialect, exams))
    if statement is None:
        statement = parts_select(dialect)
        if exams:
            statement = statement.add_columns(exam_column(dialect))
        statement = _parts_by_key[(dialect, exams)] = statement.join(
            Enrollment, Enrollment.section_id == Section.id
        ).where(Enrollment.student_id == _STUDENT, Enrollment.term_uid == bindparam("term_uid"))
    rows = (await session.execute(statement, {"student_id": student_id, "term_uid": term_uid})).all()
    rows.sort(key=lambda row: (f"{row.subject_code} {row.course_number}", row.section_number, row.crn))
    return parts_of(rows)


@dataclass(frozen=True, slots=True)
class EnrolledCourse:
    """A course of the student's record, as the course history lists it."""

    crn: str
    course_code: str
    title: str
    credits: float | None


_COURSES = (
    select(
        Enrollment.term_uid,
        Section.crn,
        Section.section_number,
        Section.title,
        Section.credits_min,
        Course.subject_code,
        Course.course_number,
        Course.title,
        Course.credits_min,
    )
    .join(Section, Section.id == Enrollment.section_id)
    .join(Course, Course.id == Section.course_id)
    .where(Enrollment.student_id == _STUDENT)
)


async def enrolled_courses(session: AsyncSession, student_id: int) -> dict[str, list[EnrolledCourse]]:
    """Every course of the student's record by term uid, each term's by course code, section number
    and CRN: one statement (it was two per term)."""
    rows = sorted(
        (await session.execute(_COURSES, {"student_id": student_id})).all(),
        key=lambda r: (f"{r[5]} {r[6]}", r[2], r[1]),
    )
    by_term: dict[str, list[EnrolledCourse]] = {}
    for term_uid, crn, _number, title, credits, subject, number, course_title, course_credits in rows:
        # The section's own credits when Banner gives them (a 0-credit lab), else the course's.
        by_term.setdefault(term_uid, []).append(
            EnrolledCourse(
                crn, f"{subject} {number}", title or course_title, credits if credits is not None else course_credits
            )
        )
    return by_term


async def enrolled_sections(session: AsyncSession, student_id: int, term_uid: str) -> list[Section]:
    """The student's sections of one term with everything an answer shows, by course code and CRN."""
    ids = (
        await session.scalars(
            select(Enrollment.section_id).where(Enrollment.student_id == student_id, Enrollment.term_uid == term_uid)
        )
    ).all()
    sections = await load_sections(session, list(ids))
    return sorted(sections, key=lambda s: (s.course.code, s.section_number, s.crn))


async def enrolled_terms(session: AsyncSession, student_id: int) -> list[Term]:
    """Every term the student has a section in, newest first."""
    uids = select(Enrollment.term_uid).where(Enrollment.student_id == student_id).distinct()
    rows = await session.scalars(select(Term).where(Term.uid.in_(uids)).order_by(Term.start_date.desc()))
    return list(rows.all())


_ANY_COURSE = select(Enrollment.id).where(Enrollment.student_id == _STUDENT).limit(1)


async def has_courses(session: AsyncSession, student_id: int) -> bool:
    """The onboarding rule (seed 000 "Page links"): a student with no course is not onboarded."""
    found = await session.scalar(_ANY_COURSE, {"student_id": student_id})
    return found is not None


async def _check_crns(session: AsyncSession, term: Term, crns: Sequence[str]) -> tuple[list[Section], list[str]]:
    """The sections of ``crns`` in ``term`` and one sentence per CRN that cannot be taken."""
    found = {
        s.crn: s
        for s in (
            await session.scalars(select(Section).where(Section.term_id == term.id, Section.crn.in_(list(crns))))
        ).all()
    }
    problems: list[str] = []
    missing = [crn for crn in crns if crn not in found]
    elsewhere: dict[str, list[str]] = {}
    if missing:
        rows = await session.execute(
            select(Section.crn, Term.name)
            .join(Term, Term.id == Section.term_id)
            .where(Section.crn.in_(missing))
            .order_by(Term.start_date.desc())
        )
        for crn, name in rows:
            elsewhere.setdefault(crn, []).append(name)
    for crn in crns:
        section = found.get(crn)
        if section is None:
            if crn in elsewhere:
                problems.append(
                    f"CRN {crn} is a section of {', '.join(elsewhere[crn])}, not of {term.name}: "
                    f"add it to that term's schedule, or find the {term.name} section with search_sections."
                )
            else:
                problems.append(
                    f"CRN {crn} is not a section the campus knows in {term.name}: check the number "
                    "(search_sections gives each section's CRN)."
                )
        elif section.cancelled:
            problems.append(f"CRN {crn} is cancelled in {term.name}: pick another section of the course.")
    return [found[crn] for crn in crns if crn in found], problems


async def checked_sections(session: AsyncSession, term: Term, crns: Sequence[str]) -> list[Section]:
    """The sections of a new list of ``term``, each with everything an answer shows, in the order
    given. All or nothing: a bad entry raises :class:`InvalidInput` naming every bad CRN and why.
    The tool's plan and the save both call this, so the question never shows a list the save refuses."""
    wanted = list(dict.fromkeys(crns))
    if len(wanted) > MAX_TERM_SECTIONS:
        raise InvalidInput(
            f"A term's schedule holds at most {MAX_TERM_SECTIONS} sections; this list has {len(wanted)}.",
            field="crns",
        )
    sections, problems = await _check_crns(session, term, wanted)
    if problems:
        raise InvalidInput(
            "Nothing was changed. " + " ".join(problems) + " Send the whole list again without them.", field="crns"
        )
    return await load_sections(session, [s.id for s in sections])


async def _hold_student(session: AsyncSession, student_id: int) -> None:
    """Make this transaction the only one changing the student's schedule until it ends.

    Two saves of one student at once (two tabs, an assistant retrying) each read the rows there
    were and each added the missing ones: the second clashed on the one-row-per-section rule and
    answered a server error (issue 30). PostgreSQL locks the student's row; SQLite lets one writer
    in at a time, and the delete that follows is the write that takes its turn."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT id FROM students WHERE id = :id FOR UPDATE"), {"id": student_id})


async def set_term_sections(
    session: AsyncSession, student_id: int, term: Term, crns: Sequence[str], *, source: str = "student"
) -> None:
    """Make the student's schedule of ``term`` exactly ``crns``. All or nothing: a bad entry raises
    :class:`InvalidInput` naming every bad CRN, and nothing is written. Saves of one student take
    turns; a clash with another writer (the enrollment feed) raises :class:`ChangedMeanwhile`
    (409) in words, never a server error. Commits."""
    sections = await checked_sections(session, term, crns)
    keep = [s.id for s in sections]
    term_uid = term.uid
    try:
        await _hold_student(session, student_id)
        # First the write (it waits for any other save of this student), then the rows there are now.
        await session.execute(
            delete(Enrollment).where(
                Enrollment.student_id == student_id, Enrollment.term_uid == term_uid, Enrollment.section_id.not_in(keep)
            )
        )
        have = set(
            (
                await session.scalars(
                    select(Enrollment.section_id).where(
                        Enrollment.student_id == student_id, Enrollment.term_uid == term_uid
                    )
                )
            ).all()
        )
        for section in sections:
            if section.id not in have:
                session.add(
                    Enrollment(
                        student_id=student_id, term_uid=term_uid, section_id=section.id, crn=section.crn, source=source
                    )
                )
        await session.commit()
    except IntegrityError as exc:
        await session.rollback()
        raise ChangedMeanwhile(
            "Nothing was changed: your schedule was being changed somewhere else at the same moment. "
            "Look at it again (my_courses) and send the list again if it is still needed.",
            field="crns",
        ) from exc
