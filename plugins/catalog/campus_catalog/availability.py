"""Whether the catalog family offers its tools: DESIGN §3 (seed 001), "a plugin whose upstream
source is not configured registers no tool that can only fail: it either has data or it is
absent".

A campus offers them when a source is configured, in demo mode (the demo catalog is loaded at
start), or when its database already holds catalog data (an administrator's import by hand).
Otherwise the 17 tools would answer empty lists ("no terms") to every question, which a model
repeats as "there are no classes"; absent, the model says this server has no catalog.

Asked once, when the plugins load (a hook is synchronous), for what is fixed at start (the
instruction fragments, the resources, the examples): the database is read with a driver of its
own, on a thread of its own (the caller may be inside an event loop), read-only.

The tools themselves are always registered, each with an offer check (``Tool.offered``) the host
asks while it serves (campus_mcp.plugin.offers): a catalog imported into an empty campus shows its tools
without a restart. The programs' tools (``list_programs``, ``degree_requirements``) and the term
electives' (``list_term_electives``) have checks of their own: a campus that loaded sections but
no programs does not offer tools that could only answer "no programs" (issue 37, point 5).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import threading
from pathlib import Path

from campus_mcp import OfferCheck, Settings, Tool
from sqlalchemy import exists, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.catalog_settings import CatalogSettings

# Any row in one of these is catalog data a tool can answer from.
DATA_TABLES = ("catalog_terms", "catalog_courses", "catalog_university_events", "catalog_programs")
PROBE = " OR ".join(f"EXISTS (SELECT 1 FROM {table})" for table in DATA_TABLES)  # noqa: S608 - constants
PROBE_TIMEOUT_S = 10.0


def catalog_offered(settings: Settings, catalog: CatalogSettings) -> bool:
    """Whether the catalog's tools, routes and instructions are registered (see the module)."""
    configured = (
        catalog.banner_configured
        or catalog.calendar_configured
        or catalog.programs_configured
        or catalog.electives_configured
    )
    return configured or settings.demo or catalog_has_data(settings.database_url)


# The tools whose data is a source of its own: offered with that source, or with its rows.
PROGRAM_TOOLS = frozenset({"list_programs", "degree_requirements"})
ELECTIVE_TOOLS = frozenset({"list_term_electives"})


def _rows_in(*tables: str) -> OfferCheck:
    """An offer check: whether any of ``tables`` has a row (a missing table: no data)."""
    from sqlalchemy import table as table_named

    async def check(session: AsyncSession) -> bool:
        probe = select(exists().select_from(table_named(tables[0])))
        for name in tables[1:]:
            probe = select(probe.scalar_subquery() | exists().select_from(table_named(name)))
        try:
            return bool(await session.scalar(probe))
        except Exception:  # not migrated yet: nothing to offer (the server's start says what is wrong)
            await session.rollback()
            return False

    return check


_ANY_CATALOG = _rows_in(*DATA_TABLES)
_PROGRAMS = _rows_in("catalog_programs")
_ELECTIVES = _rows_in("catalog_term_elective_lists")


def with_offer_checks(tools: list[Tool], settings: Settings, catalog: CatalogSettings) -> list[Tool]:
    """The catalog's tools, each offered while its source is configured or it has data (the demo
    campus loads all of it). A configured source offers its tools before its first run."""
    if settings.demo:
        return tools
    catalog_source = catalog.banner_configured or catalog.calendar_configured
    made: list[Tool] = []
    for tool in tools:
        check: OfferCheck | None
        if tool.name in PROGRAM_TOOLS:
            check = None if catalog.programs_configured else _PROGRAMS
        elif tool.name in ELECTIVE_TOOLS:
            check = None if catalog.electives_configured else _ELECTIVES
        else:
            configured = catalog_source or catalog.programs_configured or catalog.electives_configured
            check = None if configured else _ANY_CATALOG
        made.append(tool if check is None else dataclasses.replace(tool, offered=check))
    return made


def catalog_has_data(database_url: str) -> bool:
    """Whether the database holds catalog rows. A database that cannot be read is taken to have
    them: the server's own start then says what is wrong, not a missing family."""
    url = make_url(database_url)
    try:
        if url.get_backend_name() == "sqlite":
            return _sqlite_has_data(url.database)
        if url.get_backend_name() == "postgresql":
            return _postgres_has_data(url.set(drivername="postgresql").render_as_string(hide_password=False))
    except _MissingTables:
        return False
    except Exception:
        return True
    return True


class _MissingTables(Exception):
    """The catalog's tables are not there yet (a database not migrated): no data."""


def _sqlite_has_data(database: str | None) -> bool:
    if not database or database == ":memory:" or not Path(database).is_file():
        return False
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        try:
            return bool(connection.execute(f"SELECT {PROBE}").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                raise _MissingTables from error
            raise


def _postgres_has_data(dsn: str) -> bool:
    import asyncpg  # type: ignore[import-untyped]  # the server's PostgreSQL driver; imported only for PostgreSQL

    async def probe() -> bool:
        connection = await asyncpg.connect(dsn, timeout=PROBE_TIMEOUT_S)
        try:
            return bool(await connection.fetchval(f"SELECT {PROBE}"))
        except asyncpg.UndefinedTableError as error:
            raise _MissingTables from error
        finally:
            await connection.close()

    answer: list[bool] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            answer.append(asyncio.run(probe()))
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=run, name="catalog-data-probe")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return answer[0]
