"""What keeps a search fast on a 100,000-section campus (``campus-mcp demo --scale 67``).

- Days and times are tested on the section's own meeting summary (``meeting_days``,
  ``first_start_minute``, ``last_end_minute``, migration catalog_0005) in the term listing index:
  the matches of a days-and-times search are found without reading one meeting row (the two
  meeting probes per section they replaced took 168 ms for the 36,030-section term on SQLite).
  Checked on both engines from the plans: nothing under the matches' part reads
  ``catalog_meeting_times`` (the page's 25 rows still read theirs, to show them).
- The triggers that keep the summary are checked by the answers: a meeting added, moved and
  removed changes what a days-and-times search finds at once.
- A subject's sections come from the (term, course) index, not from a join test on every section
  of the term (SQLite; PostgreSQL's planner chooses with its statistics).
"""

from __future__ import annotations

from typing import Any

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Instructor, MeetingTime, Section, SectionInstructor
from campus_catalog.queries import instructor_filter, sections, terms
from campus_catalog.schemas import SectionSearch
from campus_mcp.testing import CampusHarness, TestDatabases
from sqlalchemy import func, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans
from .conftest import build_catalog_campus

DAYS_AND_TIMES = {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True}


async def _plans(campus: CampusHarness, arguments: dict[str, Any]) -> list[Any]:
    """The plan of each statement of the search: SQLite's rows, PostgreSQL's JSON."""
    query = SectionSearch.model_validate(arguments)

    async def run(session: AsyncSession) -> object:
        page = await sections.search_sections(session, query, campus.settings, CatalogSettings())
        assert page.sections, "the demo campus answers the question"
        return page

    statements = await plans._statements(campus, run)
    explained = await plans._explained(campus, statements, without_seqscan=False)
    if campus.deployment.engine.dialect.name == "postgresql":
        return explained
    return [[(int(row[0]), int(row[1]), str(row[-1])) for row in plan] for plan in explained]


def _sqlite_matching_lines(plan: list[tuple[int, int, str]]) -> list[str]:
    """The plan lines that find the matches: under the page's ``LIST SUBQUERY`` (its ids) and the
    count's ``SCALAR SUBQUERY``, not the page rows' own correlated aggregates (meetings, instructors)."""
    roots = {
        node
        for node, parent, detail in plan
        if parent == 0 and detail.startswith(("LIST SUBQUERY", "SCALAR SUBQUERY", "MATERIALIZE matching"))
    }
    under: list[str] = []
    for node, parent, detail in plan:
        if parent in roots:
            roots.add(node)
            under.append(detail)
    return under


def _pg_matching_relations(plan: Any) -> list[str]:
    """The tables PostgreSQL reads outside the page rows' correlated aggregates (``SubPlan``s):
    what finds the matches and counts them."""
    relations: list[str] = []

    def walk(node: Any, per_row: bool) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, per_row)
        elif isinstance(node, dict):
            per_row = per_row or str(node.get("Subplan Name", "")).startswith("SubPlan")
            if not per_row and "Relation Name" in node:
                relations.append(f"{node.get('Node Type')} on {node['Relation Name']}")
            for value in node.values():
                if isinstance(value, list | dict):
                    walk(value, per_row)

    walk(plan, False)
    return relations


async def test_days_and_times_find_their_matches_without_reading_meetings(demo_campus: CampusHarness) -> None:
    found = await _plans(demo_campus, DAYS_AND_TIMES)
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        relations = [r for plan in found for r in _pg_matching_relations(plan)]
        assert relations, "the plan reads the sections"
        assert not [r for r in relations if r.endswith("catalog_meeting_times")], relations
    else:
        lines = [line for plan in found for line in _sqlite_matching_lines(plan)]
        assert lines, "the page's ids and the count are subqueries of the page"
        assert not [line for line in lines if "catalog_meeting_times" in line], lines
        # Sections from the term listing index alone: no row (with its 1.5 KB vector) is read.
        reads = [line for line in lines if "catalog_sections" in line]
        assert reads and all("COVERING INDEX ix_catalog_sections_term_listing" in line for line in reads), reads


async def test_a_subject_reads_only_its_own_sections(demo_campus: CampusHarness) -> None:
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        return  # its planner picks from statistics; the no-full-scan check of test_query_plans holds there
    found = await _plans(demo_campus, {"subject": "COMP", "limit": 25})
    reads = [line for plan in found for line in _sqlite_matching_lines(plan) if "catalog_sections" in line]
    assert reads and all("course_id=?" in line for line in reads), reads


async def test_a_days_and_times_search_follows_meetings_as_they_change(campus_databases: TestDatabases) -> None:
    campus = await build_catalog_campus(campus_databases)

    async def crns(**filters: Any) -> list[str]:
        # The query itself, not a tool call: the answer cache would hand back the first answer
        # (a write outside an import does not bump the catalog's data version).
        async with campus.sessions() as session:
            page = await sections.search_sections(
                session, SectionSearch.model_validate({"term": "202720", **filters}), campus.settings, CatalogSettings()
            )
        return [s.crn for s in page.sections]

    try:
        assert await crns(days="TR", begins_after="10:00") == ["20002"]
        async with campus.sessions() as session:
            section_id = await session.scalar(select(Section.id).where(Section.crn == "20002"))
            friday = MeetingTime(section_id=section_id, weekday=4, start_minute=660, end_minute=710)
            session.add(friday)
            await session.commit()
            # A Friday meeting: no longer a Tuesday-Thursday-only section, and no longer free on Friday.
            assert await crns(days="TR", begins_after="10:00") == []
            assert "20002" in await crns(days="TRF", begins_after="10:00")
            assert "20002" not in await crns(free_days="F")

            friday.start_minute = 480  # moved to 8:00
            await session.commit()
            assert "20002" not in await crns(days="TRF", begins_after="10:00")
            assert "20002" in await crns(days="TRF", begins_after="7:30")

            await session.delete(friday)
            await session.commit()
        assert await crns(days="TR", begins_after="10:00") == ["20002"]
        assert "20002" in await crns(free_days="F")
    finally:
        await campus.close()
        await campus_databases.drop(campus.settings.database_url)


async def test_a_browse_page_walks_courses_in_order_instead_of_sorting_the_term(demo_campus: CampusHarness) -> None:
    """The demo load ends with ANALYZE on SQLite, which gathers no statistics by itself: with
    them the planner walks courses in catalog order and each course's sections through the
    indexes, and stops after the page, instead of sorting every section of the term."""
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        return  # autovacuum analyzes; its planner has an incremental sort for this
    async with demo_campus.sessions() as session:
        term = await terms.resolve_term(session, None, demo_campus.settings)
        where = [Section.term_id == term.id, Section.cancelled.is_(False)]  # a browse's filters
        order = (Course.subject_code, Course.course_number, Section.section_number, Section.crn)
        page = sections._base(where).order_by(*order).limit(25)
        compiled = page.compile(demo_campus.deployment.engine.sync_engine, compile_kwargs={"literal_binds": True})
    async with demo_campus.deployment.engine.connect() as connection:
        plan = [str(row[-1]) for row in await connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}")]
    assert not [line for line in plan if "TEMP B-TREE" in line], plan


async def test_postgresql_plans_each_search_for_its_values(demo_campus: CampusHarness) -> None:
    """A generic plan (PostgreSQL's choice after five runs of one prepared statement) cannot see
    the term or the day bits: a days-and-times page of --scale 67 took 120 ms with it, 40 without."""
    if demo_campus.deployment.engine.dialect.name != "postgresql":
        return  # SQLite plans every statement for its values
    async with demo_campus.deployment.engine.connect() as connection:
        assert await connection.scalar(text("SHOW plan_cache_mode")) == "force_custom_plan"


def _named(name: str) -> Any:
    """The sections an instructor filter means, written the plain way (a join per section)."""
    return (
        select(SectionInstructor.section_id)
        .join(Instructor, Instructor.id == SectionInstructor.instructor_id)
        .where(
            SectionInstructor.section_id == Section.id,
            or_(func.lower(Instructor.name).contains(name.lower(), autoescape=True), Instructor.pub_id == name),
        )
        .exists()
    )


async def test_an_instructor_search_finds_what_the_plain_join_finds(demo_campus: CampusHarness) -> None:
    """ "a" names nearly every instructor (each section asks its own); a surname names a few (their
    sections by id); an unknown name, none. Same page and total as the plain join."""
    async with demo_campus.sessions() as session:
        term = await terms.resolve_term(session, None, demo_campus.settings)
        surname = (await session.scalar(select(Instructor.name).order_by(Instructor.id).limit(1)) or "").split()[-1]
        assert await instructor_filter.few_teachers(session, "a") is None
        assert await instructor_filter.few_teachers(session, surname), surname
        for name in ("a", surname.lower(), "nobody by this name"):
            expected = (
                await session.scalars(
                    select(Section.crn)
                    .join(Course, Course.id == Section.course_id)
                    .where(Section.term_id == term.id, Section.cancelled.is_(False), _named(name))
                    .order_by(Course.subject_code, Course.course_number, Section.section_number, Section.crn)
                )
            ).all()
            page = await sections.search_sections(
                session, SectionSearch(instructor=name, limit=25, offset=5), demo_campus.settings, CatalogSettings()
            )
            assert (page.total, [s.crn for s in page.sections]) == (len(expected), list(expected[5:30])), name


async def test_a_broad_instructor_name_reads_the_term_listing_not_section_rows(demo_campus: CampusHarness) -> None:
    """Driven from the ids of the sections its instructors teach, "a" read each of them whole
    (with its vector), in every term, for the page and again for the count: 1.1-2 s at --scale 67.
    Now the term's listing index is walked and each section asks its instructors by its key."""
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        return  # its planner hashes the small demo tables; test_query_plans checks an index can answer
    found = await _plans(demo_campus, {"instructor": "a", "limit": 25})
    lines = [line for plan in found for line in _sqlite_matching_lines(plan)]
    reads = [line for line in lines if "catalog_section" in line]
    assert reads, lines
    assert all("COVERING INDEX" in line for line in reads), reads


async def test_postgresql_compiles_no_plan(demo_campus: CampusHarness) -> None:
    """JIT compiling cost ~120 ms of an instructor search of --scale 67 whose execution takes ~40:
    no catalog read is long enough to win it back."""
    if demo_campus.deployment.engine.dialect.name != "postgresql":
        return  # SQLite has no JIT
    async with demo_campus.deployment.engine.connect() as connection:
        assert await connection.scalar(text("SHOW jit")) == "off"


async def test_title_words_read_only_the_sections_that_have_a_title(demo_campus: CampusHarness) -> None:
    """The sections of the matching courses by the (term, course) index, the titled ones by their
    partial index (catalog_0006): no statement walks every section of the term for a title that
    almost no section has (the test ``course_id IN ... OR title LIKE`` did)."""
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        return  # its planner chooses from statistics; test_query_plans checks an index can answer
    found = await _plans(demo_campus, {"q": "introduction programming", "limit": 25})
    reads = [line for plan in found for _node, _parent, line in plan if " catalog_sections " in f"{line} "]
    assert reads, found
    assert all("course_id=?" in line or "ix_catalog_sections_titled" in line or "rowid=?" in line for line in reads)
    assert [line for line in reads if "ix_catalog_sections_titled" in line], reads


async def test_a_section_found_by_its_own_title(campus_databases: TestDatabases) -> None:
    campus = await build_catalog_campus(campus_databases)
    try:
        async with campus.sessions() as session:
            topics = await session.scalar(select(Section).where(Section.crn == "20002"))
            assert topics is not None
            topics.title = "Special Topics: Quantum Widgets"
            await session.commit()
            page = await sections.search_sections(
                session, SectionSearch(term="202720", q="quantum widgets"), campus.settings, CatalogSettings()
            )
        assert [s.crn for s in page.sections] == ["20002"]
        assert page.total == 1
    finally:
        await campus.close()
        await campus_databases.drop(campus.settings.database_url)
