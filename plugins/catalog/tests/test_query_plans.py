"""The main catalog questions stay on indexes: no full scan of the big tables, on either engine.

Each question runs its query function once on the demo campus while every statement it sends is
recorded; then each statement is explained with the same parameters. SQLite: no
``EXPLAIN QUERY PLAN`` line may ``SCAN`` sections, meetings or section instructors (a ``SEARCH``
is an index lookup). PostgreSQL, whose planner rightly prefers a sequential scan on a table this
small: with ``enable_seqscan`` off, a plan still holding a ``Seq Scan`` of one of them, or an
index scan with no index condition (the whole index), means no index can answer it. A later change that falls off an index fails here, not in production.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections
from campus_catalog.schemas import SectionLookup, SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession

BIG_TABLES = ("catalog_sections", "catalog_meeting_times", "catalog_section_instructors")

SEARCHES: dict[str, dict[str, Any]] = {
    "browse": {"limit": 25},
    "subject": {"subject": "COMP", "limit": 25},
    "title words": {"q": "introduction programming", "limit": 25},
    "days and times": {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True},
    "instructor": {"instructor": "a", "limit": 25},
    "a later page": {"subject": "COMP", "offset": 25, "limit": 25},
}


async def _statements(campus: CampusHarness, run: Callable[[AsyncSession], Awaitable[object]]) -> list[tuple[str, Any]]:
    engine = campus.deployment.engine.sync_engine
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            seen.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        async with campus.sessions() as session:
            await run(session)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert seen, "the query sent no statement"
    return seen


async def _explained(
    campus: CampusHarness, statements: list[tuple[str, Any]], *, without_seqscan: bool = True
) -> list[Any]:
    """The plan of each statement: PostgreSQL's as decoded JSON, SQLite's as its rows
    (id, parent, notused, detail). ``without_seqscan`` asks PostgreSQL to avoid a sequential scan
    wherever an index can serve, so a plan shows whether one can."""
    found: list[Any] = []
    async with campus.deployment.engine.connect() as connection:
        postgres = connection.dialect.name == "postgresql"
        if postgres and without_seqscan:
            await connection.exec_driver_sql("SET enable_seqscan = off")
        for statement, parameters in statements:
            if postgres:
                plan = (await connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters)).scalar()
                found.append(json.loads(plan) if isinstance(plan, str) else plan)
            else:
                result = await connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
                found.append([tuple(row) for row in result.all()])
        await connection.rollback()
    return found


async def _full_scans(
    campus: CampusHarness, statements: list[tuple[str, Any]], tables: tuple[str, ...] = BIG_TABLES
) -> list[str]:
    """The full scans of ``tables`` in the plans of ``statements``, as plan lines."""
    found: list[str] = []
    for plan in await _explained(campus, statements):
        if campus.deployment.engine.dialect.name == "postgresql":
            found += _pg_full_scans(plan, tables)
        else:
            details = [str(row[-1]) for row in plan]
            found += [line for line in details if any(line.startswith(f"SCAN {t}") for t in tables)]
    return found


def _pg_full_scans(plan: Any, big: tuple[str, ...] = BIG_TABLES) -> list[str]:
    nodes = [json.loads(plan) if isinstance(plan, str) else plan]
    tables: list[str] = []
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
        elif isinstance(node, dict):
            kind, table = node.get("Node Type"), node.get("Relation Name")
            # A sequential scan, or an index read end to end (no condition on its columns).
            whole_index = kind in ("Index Scan", "Index Only Scan") and "Index Cond" not in node
            if table in big and (kind == "Seq Scan" or whole_index):
                tables.append(f"{kind} on {table}")
            nodes.extend(v for v in node.values() if isinstance(v, list | dict))
    return tables


@pytest.mark.parametrize("question", list(SEARCHES))
async def test_search_sections_reads_sections_through_indexes(demo_campus: CampusHarness, question: str) -> None:
    query = SectionSearch.model_validate(SEARCHES[question])

    async def run(session: AsyncSession) -> object:
        page = await sections.search_sections(session, query, demo_campus.settings, CatalogSettings())
        assert page.sections or question == "instructor", "the demo campus answers every question"
        return page

    statements = await _statements(demo_campus, run)
    found = await _full_scans(demo_campus, statements)
    if question == "instructor" and demo_campus.deployment.engine.dialect.name == "postgresql":
        # "a" names nearly every instructor: PostgreSQL hashes their sections' rows, read from the
        # (instructor, section) index alone (catalog_0007), rather than probe per section.
        found = [scan for scan in found if scan != "Index Only Scan on catalog_section_instructors"]
    assert found == []


async def test_get_section_finds_its_section_by_crn_through_an_index(demo_campus: CampusHarness) -> None:
    async def crn_of(session: AsyncSession) -> str:
        page = await sections.search_sections(
            session, SectionSearch(subject="COMP", limit=1), demo_campus.settings, CatalogSettings()
        )
        return page.sections[0].crn

    async with demo_campus.sessions() as session:
        crn = await crn_of(session)

    async def run(session: AsyncSession) -> object:
        return await sections.get_section(session, SectionLookup(crn=crn), demo_campus.settings, CatalogSettings())

    assert await _full_scans(demo_campus, await _statements(demo_campus, run)) == []
