"""A surname's search asks the database no name, and finds its instructors' sections of the term
from the sections-by-id index (migration catalog_0008).

At ``--scale 67`` ("garcia": 290 of 20,100 instructors, 1,746 sections in every term, 495 in the
current one) the name test read all 20,100 names and counted the campus, ~15-30 ms; the roster
held in process (``instructor_names``) answers both. The term test of the 1,746 sections read
each section's row on SQLite (1.5 KB with its vector), and PostgreSQL hashed the term's 36,030
sections instead; ``ix_catalog_sections_by_id`` holds the term, the cancelled flag and what the
catalog order needs. A broad part of a name ("a") is still tested by the database, from the
(name, id) index (catalog_0007).

On the demo campus PostgreSQL rightly hashes its small term (~600 sections) rather than look up
each of a few instructors' sections; it is explained with hash joins and sequential scans off, as
at --scale 67 it plans by itself: the index it then reads is the one that can answer.
"""

from __future__ import annotations

import json
from typing import Any

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections
from campus_catalog.schemas import SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans
from . import test_query_plans_instructor_count as counted


async def _surname_reads(campus: CampusHarness, surname: str) -> tuple[list[str], list[list[str]]]:
    """The statements of a surname's search, and per statement its reads (as counted._reads)."""
    query = SectionSearch(instructor=surname, limit=25)

    async def run(session: AsyncSession) -> object:
        page = await sections.search_sections(session, query, campus.settings, CatalogSettings())
        assert page.sections, "the demo campus answers the question"
        return page

    statements = await plans._statements(campus, run)
    if campus.deployment.engine.dialect.name == "sqlite":
        explained = await plans._explained(campus, statements)
        return [s for s, _ in statements], [[str(row[-1]) for row in plan] for plan in explained]
    await counted._vacuumed(campus)
    found: list[list[str]] = []
    async with campus.deployment.engine.connect() as connection:
        await connection.exec_driver_sql("SET enable_seqscan = off")
        await connection.exec_driver_sql("SET enable_hashjoin = off")
        for statement, parameters in statements:
            plan: Any = (await connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters)).scalar()
            found.append(counted._pg_scans(json.loads(plan) if isinstance(plan, str) else plan))
        await connection.rollback()
    return [s for s, _ in statements], found


async def test_a_surname_reads_no_name_and_its_sections_from_the_by_id_index(demo_campus: CampusHarness) -> None:
    surname = await counted._a_surname(demo_campus)  # the roster is held from here on
    statements, reads = await _surname_reads(demo_campus, surname)
    assert not [s for s in statements if "FROM catalog_instructors" in s], statements
    by_id = [line for lines in reads for line in lines if "ix_catalog_sections_by_id" in line]
    assert len(by_id) == 1, reads
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        assert by_id[0] == "Index Only Scan using ix_catalog_sections_by_id on catalog_sections", reads
    else:
        assert "COVERING INDEX ix_catalog_sections_by_id (id=? AND term_id=? AND cancelled=?)" in by_id[0], reads


async def test_a_broad_name_is_tested_from_the_name_and_id_index(demo_campus: CampusHarness) -> None:
    statements, reads = await counted._reads(demo_campus, {"instructor": "a", "limit": 25})
    named = [
        (statement, lines)
        for statement, lines in zip(statements, reads, strict=True)
        if "catalog_instructors.name) LIKE" in statement or "catalog_instructors.name LIKE" in statement
    ]
    assert named, statements
    lines = [line for _statement, plan in named for line in plan]
    if demo_campus.deployment.engine.dialect.name == "postgresql":
        assert "Index Only Scan using ix_catalog_instructors_name_id on catalog_instructors" in lines, lines
    else:
        assert [line for line in lines if "COVERING INDEX ix_catalog_instructors_name_id" in line], lines
        # SQLite's LIKE ignores ASCII case as its lower() does: no lower() of every name.
        assert not [s for s, _lines in named if "lower(catalog_instructors.name)" in s], named
