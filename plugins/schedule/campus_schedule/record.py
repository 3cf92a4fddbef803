"""The schedule family's reader of a student's record for the catalog's ``check_schedule``
(``campus_catalog.student_record``): their sections in the planned term, and the courses of their
other terms, finished or under way, as ``my_course_history`` counts them."""

from __future__ import annotations

from datetime import date

from campus_catalog.api import StudentRecord
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.enrollment import enrolled_courses, student_terms
from campus_schedule.queries import term_status


async def read_record(session: AsyncSession, student_id: int, term_uid: str, today: date) -> StudentRecord:
    terms = [t for t in await student_terms(session, student_id) if t.enrolled]
    courses = await enrolled_courses(session, student_id)
    completed: set[str] = set()
    in_progress: set[str] = set()
    for term in terms:
        if term.uid == term_uid:
            continue  # the planned term's own courses are the plan, not its prerequisites
        status = term_status(term, today)
        codes = {c.course_code for c in courses.get(term.uid, [])}
        if status == "completed":
            completed |= codes
        elif status == "in_progress":
            in_progress |= codes
    return StudentRecord(
        held_crns=frozenset(c.crn for c in courses.get(term_uid, [])),
        completed=frozenset(completed),
        in_progress=frozenset(in_progress),
        terms_on_record=sum(1 for t in terms if t.uid != term_uid and term_status(t, today) != "upcoming"),
    )
