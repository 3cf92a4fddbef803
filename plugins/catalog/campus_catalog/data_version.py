"""The catalog's data version: a number that grows with every committed change to catalog data.

Cached answers are keyed by it (``campus_mcp.answer_cache``), so an import or a refresh makes
every older answer unreachable at once, in every process that shares the database. It lives in
the host's ``campus_state`` table (row ``catalog_data_version``, column ``version``).

The bump is not called by each importer: a listener on every ORM session notes a write to a
``catalog_*`` table (an ORM flush, or a Core insert, update or delete through
``session.execute``, as the demo loader and the importers do) and adds the bump to the same
transaction just before it commits. A new importer cannot forget it, and a rolled-back import
bumps nothing. Tables that are bookkeeping rather than answers (the refresh queue's claim keys,
written while a section is read) do not count.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import Any

from campus_mcp import CampusState
from sqlalchemy import event, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session

KEY = "catalog_data_version"
# Written on reads or by bookkeeping; changing them changes no catalog answer.
NOT_DATA = frozenset({"catalog_section_refresh_keys"})
_CHANGED = "catalog_data_changed"
_READ = "catalog_data_version_read"

# Called in the process that committed a change (after the commit), for caches of its own that
# cannot wait for a version read: the advisory's freshness times.
on_change: list[Callable[[], None]] = []


def _is_data(table_name: str | None) -> bool:
    return bool(table_name) and str(table_name).startswith("catalog_") and table_name not in NOT_DATA


async def current(session: AsyncSession) -> int:
    """The version now: 0 on a database whose catalog never changed since this row existed.
    Noted on the session for the rest of its transaction (:func:`known`)."""
    value = await session.scalar(select(CampusState.version).where(CampusState.key == KEY))
    session.info[_READ] = version = int(value or 0)
    return version


def known(session: AsyncSession) -> int | None:
    """The version this session's transaction already read, if it did: what the lookup tables
    held in process (``queries.lookups``) compare with, at no extra query."""
    value = session.info.get(_READ)
    return value if isinstance(value, int) else None


def writing(session: AsyncSession) -> bool:
    """Whether this session holds catalog writes it has not committed (they may be rolled back)."""
    return bool(session.info.get(_CHANGED)) or _pending_data(session.sync_session)


def _bump(session: Session) -> None:
    # The deployment's two engines both have INSERT ... ON CONFLICT: one statement for the first
    # bump and the later ones, so two first importers cannot collide on the key.
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert(CampusState)
        .values(key=KEY, value="", version=1)
        .on_conflict_do_update(index_elements=[CampusState.key], set_={"version": CampusState.version + 1})
    )


@event.listens_for(Session, "do_orm_execute")
def _note_statement(state: ORMExecuteState) -> None:
    if state.is_select:
        return
    if state.is_insert or state.is_update or state.is_delete:
        table = getattr(state.statement, "table", None)
        if _is_data(getattr(table, "name", None)):
            state.session.info[_CHANGED] = True


def _pending_data(session: Session) -> bool:
    return any(
        _is_data(getattr(row, "__tablename__", None)) for row in chain(session.new, session.dirty, session.deleted)
    )


@event.listens_for(Session, "after_flush")
def _note_flush(session: Session, _context: Any) -> None:
    if not session.info.get(_CHANGED) and _pending_data(session):
        session.info[_CHANGED] = True


@event.listens_for(Session, "before_commit")
def _bump_before_commit(session: Session) -> None:
    if session.info.get(_CHANGED) or _pending_data(session):
        _bump(session)
        session.info[_CHANGED] = False
        session.info["catalog_data_bumped"] = True


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    session.info.pop(_READ, None)
    if session.info.pop("catalog_data_bumped", False):
        for callback in on_change:
            callback()


@event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop(_CHANGED, None)
    session.info.pop("catalog_data_bumped", None)
    session.info.pop(_READ, None)
