"""An instructor filter and a term's count read narrow indexes (migration catalog_0007).

At ``--scale 67`` an instructor search for a surname ("garcia": 290 of 20,100 instructors, 495
sections of the term) read every instructor row on PostgreSQL (its name index lacked the id),
found the sections through an index that lacked the section id (a row read per entry), and did
both twice, for the page and for its count. A browse counted the term's 36,030 sections from the
wide listing index. The plans of the demo campus show the indexes each now reads; PostgreSQL,
which rightly prefers a sequential scan of tables this small, is explained with ``enable_seqscan``
off (as in test_query_plans): the index it then picks is the one that can answer.
"""

from __future__ import annotations

from typing import Any

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Instructor
from campus_catalog.queries import instructor_filter, sections
from campus_catalog.schemas import SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans


async def _reads(campus: CampusHarness, arguments: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The statements of one search, and per statement the reads of its plan: SQLite's plan
    lines, PostgreSQL's scan nodes as "<node type> using <index> on <table>" (at the demo
    campus's size it may read an index as a bitmap; at --scale 67 these are index-only)."""
    query = SectionSearch.model_validate(arguments)

    async def run(session: AsyncSession) -> object:
        page = await sections.search_sections(session, query, campus.settings, CatalogSettings())
        assert page.sections, "the demo campus answers the question"
        return page

    statements = await plans._statements(campus, run)
    postgres = campus.deployment.engine.dialect.name == "postgresql"
    if postgres:
        await _vacuumed(campus)
    found = [
        _pg_scans(plan) if postgres else [str(row[-1]) for row in plan]
        for plan in await plans._explained(campus, statements)
    ]
    return [statement for statement, _ in statements], found


async def _vacuumed(campus: CampusHarness) -> None:
    """Vacuum the tables as autovacuum does a loaded campus: a copied database has no visibility
    map yet, so an index-only scan would be costed with a read of every row it finds."""
    async with campus.deployment.engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        for table in ("catalog_instructors", "catalog_section_instructors", "catalog_sections"):
            await autocommit.exec_driver_sql(f"VACUUM ANALYZE {table}")


def _pg_scans(plan: Any) -> list[str]:
    scans: list[str] = []
    nodes = [plan]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
        elif isinstance(node, dict):
            if "Relation Name" in node:
                scans.append(f"{node['Node Type']} using {node.get('Index Name')} on {node['Relation Name']}")
            elif "Index Name" in node:  # a Bitmap Index Scan, under the heap scan it feeds
                scans.append(f"{node['Node Type']} using {node['Index Name']}")
            nodes.extend(v for v in node.values() if isinstance(v, list | dict))
    return scans


async def _a_surname(campus: CampusHarness) -> str:
    """A surname of the demo campus that names a few of its instructors (the few_teachers path)."""
    async with campus.sessions() as session:
        name = await session.scalar(select(Instructor.name).order_by(Instructor.id).limit(1))
        surname = (name or "").split()[-1].lower()
        assert await instructor_filter.few_teachers(session, surname), surname
    return surname


async def test_a_surname_is_found_in_the_roster_not_by_a_name_test(demo_campus: CampusHarness) -> None:
    """A surname's instructors come from the roster held in process (queries/instructor_names.py):
    no statement tests names. The broad name's own test and its index are checked in
    test_query_plans_instructor_roster.py."""
    statements, _reads_of = await _reads(demo_campus, {"instructor": await _a_surname(demo_campus), "limit": 25})
    assert statements, "the search read nothing"
    named = [s for s in statements if "catalog_instructors.name) LIKE" in s or "catalog_instructors.name LIKE" in s]
    assert named == [], named


async def test_a_few_instructors_sections_are_found_once_from_the_instructor_index(
    demo_campus: CampusHarness,
) -> None:
    _statements, reads = await _reads(demo_campus, {"instructor": await _a_surname(demo_campus), "limit": 25})
    by_instructor = [
        line for lines in reads for line in lines if "ix_catalog_section_instructors_by_instructor" in line
    ]
    # Once: the matches in the catalog order, counted and paged from that one read (the page
    # statement read them for its page and again for its count).
    assert len(by_instructor) == 1, reads
    if demo_campus.deployment.engine.dialect.name == "sqlite":
        assert "COVERING INDEX ix_catalog_section_instructors_by_instructor (instructor_id=?)" in by_instructor[0]


async def test_a_broad_name_is_tested_for_each_engines_planner(demo_campus: CampusHarness) -> None:
    """``instructor_id + 0`` keeps SQLite from probing the key once per named instructor;
    PostgreSQL cannot use an index for it and hashed every section-instructor row instead."""
    statements, _reads_of = await _reads(demo_campus, {"instructor": "a", "limit": 25})
    added = [s for s in statements if "catalog_section_instructors.instructor_id +" in s]
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        assert added == [], added
    else:
        assert added, statements


async def test_a_browse_is_counted_from_the_narrow_term_index(demo_campus: CampusHarness) -> None:
    _statements, reads = await _reads(demo_campus, {"limit": 25})
    lines = [line for plan in reads for line in plan]
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        assert "Index Only Scan using ix_catalog_sections_term_count on catalog_sections" in lines, lines
    else:
        assert [line for line in lines if "COVERING INDEX ix_catalog_sections_term_count" in line], lines
