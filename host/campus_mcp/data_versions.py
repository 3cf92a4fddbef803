"""Data versions: numbers a plugin keeps in the host's database and bumps when its data changes,
so what it keeps in memory (an answer cache's key, a table held in process) can tell at once
whether the data moved, in every process that shares the database.

A version is named by a key of the plugin's own (``catalog_data_version``); a key never bumped
reads 0. :func:`read_versions` reads several in one statement; :func:`version_bump` is the
statement that adds one to each (creating it at 1), to run in the transaction that changes the
data, so a rolled-back change bumps nothing. It is a plain statement: it runs in an ORM session
(async or not, as in a ``before_commit`` listener) and on a Core connection alike.

When an ORM session commits a bump, this process also forgets the data sources' cached freshness
(:mod:`campus_mcp.advisory`), so the next advisory tells of the change at once rather than within
its ten minutes; other processes see it within those minutes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from sqlalchemy import Insert, Select, event, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session

from campus_mcp.demo import CampusState

_BUMPED = "campus_data_versions_bumped"
_TABLE = CampusState.__tablename__


async def read_versions(session: AsyncSession | AsyncConnection, keys: Sequence[str]) -> dict[str, int]:
    """Each of ``keys`` with its version, read in one statement (0 for a key never bumped)."""
    wanted = tuple(keys)
    # A Core statement, built once per set of keys, on the session's connection: an answer cache
    # reads versions on every call, and the ORM's execute and building the statement each time
    # were most of that read's cost. Nothing pending needs flushing first: bumps are executed.
    connection = await session.connection() if isinstance(session, AsyncSession) else session
    rows = await connection.execute(_versions_of(wanted))
    found = {str(key): int(version or 0) for key, version in rows}
    return {key: found.get(key, 0) for key in wanted}


@functools.lru_cache(maxsize=64)
def _versions_of(keys: tuple[str, ...]) -> Select[str, int]:
    table = CampusState.__table__
    return select(table.c.key, table.c.version).where(table.c.key.in_(keys))


def version_bump(dialect: str, keys: Sequence[str]) -> Insert:
    """The statement adding one to each of ``keys`` (a new key starts at 1), for ``dialect``
    (``session.get_bind().dialect.name``: "sqlite" or "postgresql"). One statement for the first
    bump and the later ones, so two first writers cannot collide on a key."""
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    return (
        insert(CampusState)
        .values([{"key": key, "value": "", "version": 1} for key in keys])
        .on_conflict_do_update(index_elements=[CampusState.key], set_={"version": CampusState.version + 1})
    )


@event.listens_for(Session, "do_orm_execute")
def _note_bump(state: ORMExecuteState) -> None:
    # Named, not compared by identity: an ORM statement holds an annotated copy of the table.
    if (state.is_insert or state.is_update) and getattr(
        getattr(state.statement, "table", None), "name", None
    ) == _TABLE:
        state.session.info[_BUMPED] = True


@event.listens_for(Session, "after_commit")
def _forget_freshness_after_a_bump(session: Session) -> None:
    if session.info.pop(_BUMPED, False):
        from campus_mcp.advisory import forget_freshness
        from campus_mcp.offers import forget_offers

        forget_freshness()
        forget_offers()  # a tool with no data may have some now


@event.listens_for(Session, "after_rollback")
def _nothing_bumped(session: Session) -> None:
    session.info.pop(_BUMPED, None)
