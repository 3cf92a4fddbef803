"""The other answers of issue 16's goals stay on indexes too: ``get_course``, ``search_reviews``
(by course and by instructor), ``check_schedule`` and ``similar_sections``, read on the demo
campus as narrow rows (no statement loads a whole row with its vector, as the ORM loads did)
and with every statement explained (the checks of ``test_query_plans``: no SQLite ``SCAN``
of the big tables, no PostgreSQL sequential or condition-less index scan of them with
``enable_seqscan`` off). Reviews count as a big table here: a campus has far more reviews than
courses.

Not checked: ``unlocks`` (part of ``get_course``) reads every course with prerequisites for a
LIKE on their JSON, and a browse of all reviews newest first reads the posted_on index from its
end; both are the right plans for what they ask.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Instructor, Review
from campus_catalog.queries import courses, instructors, schedule_check, sections
from campus_catalog.schemas import (
    CourseLookup,
    ReviewSearch,
    ScheduleCheckQuery,
    SectionSearch,
    SimilarSectionsQuery,
)
from campus_mcp.testing import CampusHarness
from sqlalchemy import String, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans

BIG_TABLES = (*plans.BIG_TABLES, "catalog_reviews")


def _whole_rows_with_vectors(statements: list[tuple[str, Any]]) -> list[str]:
    """Statements that read a row's vector with its other columns: an ORM load of a whole
    ``Section``, ``Course`` or ``Review`` row (1.5 KB of vector each, for an answer that never
    shows it). The search by meaning reads (id, vector) pairs; that is what it needs."""
    found = []
    for statement, _parameters in statements:
        columns = re.split(r"\bFROM\b", statement, maxsplit=1, flags=re.IGNORECASE)[0]
        if "embedding" in columns and columns.count(",") > 1:
            found.append(" ".join(statement.split())[:120])
    return found


async def _samples(campus: CampusHarness) -> dict[str, Any]:
    """A course with prerequisites, a reviewed course and instructor, and a plan of CRNs."""
    async with campus.sessions() as session:
        course = (
            await session.execute(
                select(Course.subject_code, Course.course_number)
                .where(cast(Course.prerequisites, String).like('%"course"%'))
                .order_by(Course.id)
                .limit(1)
            )
        ).one()
        reviewed = await session.scalar(
            select(Review.course_code)
            .where(Review.course_code.is_not(None))
            .group_by(Review.course_code)
            .order_by(func.count().desc())
            .limit(1)
        )
        teacher = await session.scalar(
            select(Instructor.pub_id).join(Review, Review.instructor_id == Instructor.id).limit(1)
        )
        page = await sections.search_sections(
            session, SectionSearch(subject="COMP", limit=4), campus.settings, CatalogSettings()
        )
    return {
        "course": f"{course.subject_code} {course.course_number}",
        "reviewed": reviewed,
        "teacher": teacher,
        "crns": [s.crn for s in page.sections],
    }


# The statements each answer sends at most. Each is several hops to SQLite's driver thread, which
# cost more than the reads themselves (issue 16); the ORM loads sent 6, 4, 6 and 11. A search by
# meaning (similar_sections) sends what semantic.py needs; not counted here.
STATEMENTS = {"get_course": 4, "reviews of a course": 1, "reviews of an instructor": 2, "check_schedule": 6}
QUESTIONS = (*STATEMENTS, "similar_sections")


@pytest.mark.parametrize("question", QUESTIONS)
async def test_answers_read_narrow_rows_through_indexes(demo_campus: CampusHarness, question: str) -> None:
    sample = await _samples(demo_campus)
    settings, catalog = demo_campus.settings, CatalogSettings()

    async def run(session: AsyncSession) -> object:
        if question == "get_course":
            course = await courses.get_course(session, CourseLookup(code=sample["course"]), settings, catalog)
            assert course.prerequisites is not None and course.offered_in
            return course
        if question.startswith("reviews"):
            by = {"course": sample["reviewed"]} if "course" in question else {"instructor": sample["teacher"]}
            page = await instructors.search_reviews(session, ReviewSearch.model_validate(by), settings, catalog)
            assert page.reviews and page.total
            return page
        if question == "check_schedule":
            check = await schedule_check.check_schedule(
                session, ScheduleCheckQuery(crns=sample["crns"]), settings, catalog
            )
            assert [s.crn for s in check.sections] == sample["crns"]
            return check
        similar = await sections.similar_sections(
            session, SimilarSectionsQuery(crn=sample["crns"][0]), settings, catalog
        )
        assert similar.sections
        return similar

    if question == "similar_sections":
        # The vectors held in process are read once per catalog data version (vector_index: one
        # pass over the titled sections); what is checked here is what each search reads.
        async with demo_campus.sessions() as session:
            await run(session)
    statements = await plans._statements(demo_campus, run)
    assert len(statements) <= STATEMENTS.get(question, len(statements))
    assert _whole_rows_with_vectors(statements) == []
    assert await plans._full_scans(demo_campus, statements, BIG_TABLES) == []
