"""get_section, check_schedule and get_course each read their answer in one statement, and
search_reviews' page is a statement built once per shape of its filters (issue 16: every statement
is hops to SQLite's thread and a pass through SQLAlchemy), and the answers are still what the rules
say: the exam of the section's CRN, else its course's, from the term's newest completed finals
schedule; the briefs of its cross-listed and linked sections of its term; the terms a course is
offered in and the courses it unlocks.

The small catalog of conftest.py, on a campus of this module's own with more finals: a course
exam of COMP 1000, an older completed schedule and a newer one that failed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import date, timedelta

import pytest
from campus_catalog import data_version
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import FinalExam, FinalsSchedule, Section, Term
from campus_catalog.queries import courses, instructors, schedule_check, sections
from campus_catalog.schemas import CourseLookup, ReviewSearch, ScheduleCheckQuery, SectionLookup
from campus_mcp.testing import CampusHarness, TestDatabases
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans
from .conftest import SYNCED, ToolCaller, build_catalog_campus


def _exam(term: Term, crn: str | None, course_code: str | None, day: date, room: str, schedule: int = 0) -> FinalExam:
    return FinalExam(
        **({"schedule_id": schedule} if schedule else {}),
        term_id=term.id,
        crn=crn,
        course_code=course_code,
        exam_date=day,
        start_minute=780,
        end_minute=900,
        building="RICH",
        room=room,
    )


@pytest.fixture(scope="module")
async def campus(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    harness = await build_catalog_campus(campus_databases)
    async with harness.sessions() as session:
        spring = (await session.scalars(select(Term).where(Term.uid == "202720"))).one()
        day = spring.end_date - timedelta(days=2)
        current = (await session.scalars(select(FinalsSchedule).where(FinalsSchedule.term_id == spring.id))).one()
        # The course's exam in the schedule that counts: 20002 (COMP 1000, no exam of its own) has it.
        session.add(_exam(spring, None, "COMP 1000", day, "COURSE", current.id))
        session.add(_exam(spring, None, "COMP 1000", day, "SECOND-ROW", current.id))  # the first row counts
        older = FinalsSchedule(term_id=spring.id, status="completed", loaded_at=SYNCED - timedelta(days=30))
        older.exams = [_exam(spring, "20002", None, day, "OLDER"), _exam(spring, "20003", None, day, "OLDER")]
        failed = FinalsSchedule(term_id=spring.id, status="failed", loaded_at=SYNCED + timedelta(days=30))
        failed.exams = [_exam(spring, "20001", None, day, "FAILED"), _exam(spring, None, "CHEM 1100", day, "FAILED")]
        session.add_all([older, failed])
        # A cross-list naming the section itself and a CRN of no section: both left out of the briefs.
        await session.execute(
            update(Section)
            .where(Section.term_id == spring.id, Section.crn == "20003")
            .values(cross_listed_crns=["20007", "20003", "29999"])
        )
        await session.commit()
        assert current.status == "completed"
    yield harness
    await harness.close()
    await campus_databases.drop(harness.settings.database_url)


async def _statements(campus: CampusHarness, run: Callable[[AsyncSession], Awaitable[object]]) -> int:
    """How many statements ``run`` sends (every one a read) after the session read the catalog's
    versions, as a tool call's answer cache does for its key (the held terms compare with them;
    a session that has not read them reads them once, issue 25)."""
    # Terms held in process first, then the versions read by the counted session before ``run``.
    await plans._statements(campus, run)

    async def after_the_versions(session: AsyncSession) -> object:
        await data_version.current(session)
        return await run(session)

    return len(await plans._statements(campus, after_the_versions)) - 1


async def test_the_exam_is_the_crns_else_the_courses_from_the_newest_completed_schedule(campus: CampusHarness) -> None:
    catalog = ToolCaller(campus)
    own = await catalog.ok("get_section", crn="20001", term="202720")
    assert (own["final_exam"]["start"], own["final_exam"]["room"]) == ("09:00", "210")
    by_course = await catalog.ok("get_section", crn="20002")
    assert (by_course["final_exam"]["start"], by_course["final_exam"]["room"]) == ("13:00", "COURSE")
    # The older schedule's exam of 20003 does not count, and CHEM's is in the failed upload only.
    assert (await catalog.ok("get_section", crn="20003"))["final_exam"] is None
    assert (await catalog.ok("get_section", crn="20004"))["final_exam"] is None
    assert (await catalog.ok("get_section", crn="10001"))["final_exam"] is None  # a term with no finals
    # The other plugins' final_exam (the schedule feed, busy times) gives the same exams.
    async with campus.sessions() as session:
        spring = await session.scalar(select(Term.id).where(Term.uid == "202720"))
        assert spring is not None
        exam = await sections.exam_of(session, spring, "20002", "COMP 1000")
        assert exam is not None and exam.model_dump(mode="json") == by_course["final_exam"]
        assert await sections.exam_of(session, spring, "20003", "COMP 2000") is None


async def test_the_briefs_are_the_cross_listed_and_linked_sections_of_the_term(campus: CampusHarness) -> None:
    catalog = ToolCaller(campus)
    listed = await catalog.ok("get_section", crn="20003", term="spring 2027")
    assert listed["cross_listed_crns"] == ["20007", "20003", "29999"]
    assert [b["crn"] for b in listed["cross_listed"]] == ["20007"]
    assert listed["cross_listed"][0]["course_code"] == "MGMT 3100"
    lecture = await catalog.ok("get_section", crn="20004")
    assert [(b["crn"], b["schedule_type"], b["cancelled"]) for b in lecture["linked"]] == [
        ("20005", "Laboratory", False),
        ("20006", "Laboratory", False),
    ]
    assert lecture["cross_listed"] == []


async def test_an_unknown_crn_says_so_as_before(campus: CampusHarness) -> None:
    catalog = ToolCaller(campus)
    assert "No section has CRN 29999 in any term" in await catalog.error("get_section", crn="29999")
    assert "No section has CRN 10001 in Spring 2027" in await catalog.error("get_section", crn="10001", term="202720")


async def test_get_section_and_check_schedule_read_in_one_statement(campus: CampusHarness) -> None:
    settings, catalog = campus.settings, CatalogSettings()
    for lookup in (SectionLookup(crn="20004"), SectionLookup(crn="20003", term="202720")):

        async def get(session: AsyncSession, lookup: SectionLookup = lookup) -> object:
            return await sections.get_section(session, lookup, settings, catalog)

        assert await _statements(campus, get) == 1
    plan = ScheduleCheckQuery(crns=["20004", "20005", "29999"])

    async def check(session: AsyncSession) -> object:
        return await schedule_check.check_schedule(session, plan, settings, catalog)

    assert await _statements(campus, check) == 1


async def test_get_course_reads_the_course_its_terms_and_what_it_unlocks_in_one_statement(
    campus: CampusHarness,
) -> None:
    """Its prerequisites' titles are a second statement, for a course that has prerequisites."""
    catalog = ToolCaller(campus)
    intro = await catalog.ok("get_course", code="COMP 1000")
    assert intro["unlocks"] == [{"code": "COMP 2000", "title": "Data Structures"}]
    assert [(o["term"]["uid"], o["section_count"]) for o in intro["offered_in"]] == [("202710", 1), ("202720", 2)]
    assert intro["prerequisites"] is None
    advanced = await catalog.ok("get_course", code="comp2000")
    assert advanced["unlocks"] == [] and advanced["prerequisites"] is not None
    assert "No course ZZZ 9999 is in the catalog" in await catalog.error("get_course", code="ZZZ 9999")
    settings, catalog_settings = campus.settings, CatalogSettings()
    for code, statements in (("COMP 1000", 1), ("COMP 2000", 2)):

        async def get(session: AsyncSession, code: str = code) -> object:
            return await courses.get_course(session, CourseLookup(code=code), settings, catalog_settings)

        assert await _statements(campus, get) == statements


async def test_a_review_page_built_once_per_shape_gives_each_call_its_own_filters(campus: CampusHarness) -> None:
    """search_reviews' page statement is kept per shape of the filters: the next call with the
    same shape and other values gets its own reviews and count, in one statement."""
    catalog = ToolCaller(campus)
    pages = [
        await catalog.ok("search_reviews", course=code, limit=1) for code in ("COMP 1000", "COMP 2000", "COMP 1000")
    ]
    assert pages[0] == pages[2]
    assert all(r["course_code"] == "COMP 1000" for r in pages[0]["reviews"])
    assert all(r["course_code"] == "COMP 2000" for r in pages[1]["reviews"])
    praise = await catalog.ok("search_reviews", sentiment="positive", limit=50)
    assert praise["reviews"] and all(r["sentiment"] >= 0.25 for r in praise["reviews"])
    settings, catalog_settings = campus.settings, CatalogSettings()

    async def page(session: AsyncSession) -> object:
        query = ReviewSearch(course="COMP 1000", sentiment="negative", offset=1, limit=2)
        return await instructors.search_reviews(session, query, settings, catalog_settings)

    assert await _statements(campus, page) <= 2  # the page with its count; the count alone past the end
