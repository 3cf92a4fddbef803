"""The catalog's data version: a number that grows with every committed change to catalog data.

Cached answers are keyed by it (``campus_mcp.plugin.answer_cache``), so an import or a refresh makes
every older answer unreachable at once, in every process that shares the database. It is one of
the host's data versions (``campus_mcp.read_versions``, ``campus_mcp.version_bump``), key
``catalog_data_version``.

The bump is not called by each importer: a listener on every ORM session notes a write to a
``catalog_*`` table (an ORM flush, or a Core insert, update or delete through
``session.execute``, as the demo loader and the importers do) and adds the bump to the same
transaction just before it commits. A new importer cannot forget it, and a rolled-back import
bumps nothing. Tables that are bookkeeping rather than answers (the refresh queue's claim keys,
written while a section is read) do not count.

The vectors held in process (``vector_index``) are keyed by a second number per kind of vector,
the **vectors version** (rows ``catalog_vectors_version:<kind>``), bumped by the same listener in
the same transaction only by a write that can change what that kind's snapshot holds: an insert
or a delete of a row with vectors (or of a row whose delete cascades to one), or an update that
sets a column the snapshot reads (:data:`HELD_COLUMNS`). Seats, written every 30 minutes
during registration and whenever the refresh queue reads Banner, change no vector: they move the
data version (answers change) but reload nothing (335,000 reviews' vectors took ~9 s to reload
at ``--scale 67``). When a write's columns cannot be told, it bumps: a reload is slow, a stale
vector is wrong.

The instructor roster held in process (``queries.instructor_names``: every instructor's id,
public id and name) is keyed the same way, by the **roster version** (row
``catalog_roster_version``, kind :data:`ROSTER`), which only an insert or a delete of an
instructor (or of a row whose delete cascades to one), or an update of a column the roster reads
moves: keyed by the data version, a seat refresh rebuilt the roster in every process (slow
at ``--scale 67``) for names it never changed. The callbacks of :data:`on_change` are told which
of these kinds a commit moved, so this process forgets only what the commit can have changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import chain
from typing import Any

from campus_mcp import read_versions, version_bump
from sqlalchemy import ClauseElement, Table, event, inspect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session, SessionTransaction

KEY = "catalog_data_version"
# The kinds of vectors held in process, each with its own vectors version: a search by meaning
# of sections or courses never waits for the reviews' reload, nor a review search for a course's.
VECTOR_KINDS = ("catalog", "instructors", "reviews")
# The instructor roster (``queries.instructor_names``), held with a version of its own too.
ROSTER = "roster"
# Every kind held in process with a version of its own.
HELD_KINDS = (*VECTOR_KINDS, ROSTER)
# The columns each kind reads, per table (``vector_index``: the ids and vectors of courses and of
# sections with a title of their own, of instructors, of reviews with their sentiment; the
# roster: each instructor's id, public id and name). Anything else a search by meaning filters
# on is asked of the database.
HELD_COLUMNS: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "catalog_courses": (("catalog", frozenset({"id", "embedding"})),),
    "catalog_sections": (("catalog", frozenset({"id", "embedding", "title"})),),
    "catalog_instructors": (
        ("instructors", frozenset({"id", "embedding"})),
        (ROSTER, frozenset({"id", "pub_id", "name"})),
    ),
    "catalog_reviews": (("reviews", frozenset({"id", "embedding", "sentiment"})),),
}
# Written on reads or by bookkeeping; changing them changes no catalog answer.
NOT_DATA = frozenset({"catalog_section_refresh_keys"})
_CHANGED = "catalog_data_changed"
_READ = "catalog_data_version_read"
_VECTORS_CHANGED = "catalog_vectors_changed"
_VECTORS_READ = "catalog_vectors_version_read"
_BUMPED = "catalog_data_bumped"
# An UPDATE's SQL: where its SET clause ends, and each column it assigns (each assignment starts
# the clause or follows a comma; a comma inside a value can only add a column, which bumps more).
_SET_CLAUSE_END = re.compile(r"\s(?:WHERE|FROM|RETURNING)\s")
_ASSIGNED = re.compile(r",\s*[`\"\[]?(\w+)[`\"\]]?\s*=")


def version_key(kind: str) -> str:
    """The data version key of one kind's version (``HELD_KINDS``)."""
    # The roster's row is named for what it counts; the vectors' rows keep the names they have.
    return "catalog_roster_version" if kind == ROSTER else f"catalog_vectors_version:{kind}"


# Called in the process that committed a change (after the commit), for caches of its own that
# cannot wait for a version read (the lookup tables; the host forgets the advisory's freshness
# times itself after a committed bump), with the kinds (``HELD_KINDS``) the commit moved: the data version moved with every commit.
on_change: list[Callable[[frozenset[str]], None]] = []


def _is_data(table_name: str | None) -> bool:
    return bool(table_name) and str(table_name).startswith("catalog_") and table_name not in NOT_DATA


_KEYS_READ = (KEY, *(version_key(kind) for kind in HELD_KINDS))


def database_key(session: AsyncSession) -> str:
    """The database a session reads, as the key of what a process holds per database (two
    campuses in one process are two URLs); the password left out, as it is kept in memory."""
    return session.get_bind().engine.url.render_as_string(hide_password=True)


async def current(session: AsyncSession) -> int:
    """The version now: 0 on a database whose catalog never changed since this row existed.
    Noted on the session for the rest of its transaction (:func:`known`), with the versions of
    the kinds held in process, read in the same statement (the answer cache's read serves the
    vector index and the roster too)."""
    found = await read_versions(session, _KEYS_READ)
    session.info[_READ] = version = found[KEY]
    session.info[_VECTORS_READ] = {kind: found[version_key(kind)] for kind in HELD_KINDS}
    return version


async def vectors_version(session: AsyncSession, kind: str) -> int:
    """One kind's version (``HELD_KINDS``): what ``vector_index`` keys its snapshot by. Read
    with the data version, once per transaction (no query if this one read it)."""
    read = session.info.get(_VECTORS_READ)
    if not isinstance(read, dict):
        await current(session)
        read = session.info[_VECTORS_READ]
    return int(read[kind])


def known(session: AsyncSession, kind: str | None = None) -> int | None:
    """The data version (or with ``kind``, that kind's version) this session's transaction
    already read, if it did: what the tables held in process (``queries.lookups``) compare
    with, at no extra query."""
    if kind is None:
        value = session.info.get(_READ)
    else:
        read = session.info.get(_VECTORS_READ)
        value = read.get(kind) if isinstance(read, dict) else None
    return value if isinstance(value, int) else None


async def version_of(session: AsyncSession, kind: str | None = None) -> int:
    """The data version (or that kind's version), read in this session's transaction at most once
    (:func:`current` reads every version in one query)."""
    known_now = known(session, kind)
    if known_now is None:
        await current(session)
        known_now = known(session, kind)
    return known_now or 0


def writing(session: AsyncSession) -> bool:
    """Whether this session holds catalog writes it has not committed (they may be rolled back)."""
    return bool(session.info.get(_CHANGED)) or _pending_data(session.sync_session)


def _bump(session: Session, kinds: set[str]) -> None:
    # The vectors versions that move ride in the same statement as the data version.
    keys = [KEY, *(version_key(kind) for kind in HELD_KINDS if kind in kinds)]
    session.execute(version_bump(session.get_bind().dialect.name, keys))


_cascades: dict[str, frozenset[str]] | None = None


def _kinds_deleted_with(table_name: str) -> frozenset[str]:
    """The kinds a delete from this table changes: its own, and those of the tables whose rows
    the database deletes with it (``ON DELETE CASCADE``, followed through: a subject takes its
    courses and their sections, an instructor their reviews)."""
    global _cascades
    if _cascades is None:
        from campus_catalog.models import Course

        tables = Course.metadata.tables
        found: dict[str, set[str]] = {}

        def climb(table: Table, kind: str) -> None:
            for key in table.foreign_keys:
                parent = key.column.table
                if (key.ondelete or "").upper() == "CASCADE" and kind not in found.setdefault(parent.name, set()):
                    found[parent.name].add(kind)
                    climb(parent, kind)

        for name, held in HELD_COLUMNS.items():
            for kind, _columns in held:
                found.setdefault(name, set()).add(kind)
                if name in tables:
                    climb(tables[name], kind)
        _cascades = {name: frozenset(kinds) for name, kinds in found.items()}
    return _cascades.get(table_name, frozenset())


def _column_names(keys: Any) -> set[str]:
    return {str(getattr(key, "key", None) or getattr(key, "name", None) or key) for key in keys}


def _kinds_of_statement(state: ORMExecuteState, table_name: str) -> frozenset[str]:
    """The kinds an INSERT, UPDATE or DELETE through ``session.execute`` may change."""
    if state.is_delete:
        return _kinds_deleted_with(table_name)
    held = HELD_COLUMNS.get(table_name, ())
    every = frozenset(kind for kind, _read in held)
    if state.is_insert or not held:
        return every
    # An UPDATE: an ORM bulk update by primary key (parameter sets, no WHERE) sets the columns
    # its sets name but the key (which finds the row); any other sets the columns of its SQL's
    # SET clause and, run with parameter sets, their keys.
    statement: Any = state.statement
    parameters = state.parameters
    sets = list(parameters) if isinstance(parameters, list) else [parameters] if parameters else []
    columns: set[str] = set()
    for one in sets:
        columns |= _column_names(one)
    if sets and getattr(statement, "whereclause", None) is None:
        columns -= {column.key for column in statement.table.primary_key}
    else:
        assigned = _assigned_columns(state)
        if assigned is None:
            return every  # what it sets cannot be told
        columns |= assigned
    return frozenset(kind for kind, read in held if columns & read)


def _assigned_columns(state: ORMExecuteState) -> set[str] | None:
    """The columns an UPDATE's SET clause names, read from the SQL the session's dialect writes
    for it (None when there is none to read). Paid by an UPDATE of a held table only."""
    statement = state.statement
    if not isinstance(statement, ClauseElement):
        return None
    try:
        sql = str(statement.compile(dialect=state.session.get_bind().dialect))
    except Exception:  # a statement that compiles only at execution: counted as setting everything
        return None
    _, found, rest = sql.partition(" SET ")
    if not found:
        return None
    assignments = _SET_CLAUSE_END.split(rest, maxsplit=1)[0]
    return set(_ASSIGNED.findall(f", {assignments}"))


def _kinds_of_objects(session: Session) -> set[str]:
    """The kinds the session's unflushed (or just flushed) objects change."""
    kinds: set[str] = set()
    for row in session.new:
        kinds.update(kind for kind, _read in HELD_COLUMNS.get(getattr(row, "__tablename__", ""), ()))
    for row in session.deleted:
        kinds |= _kinds_deleted_with(str(getattr(row, "__tablename__", "")))
    for row in session.dirty:
        held = [
            (kind, read) for kind, read in HELD_COLUMNS.get(getattr(row, "__tablename__", ""), ()) if kind not in kinds
        ]
        if not held:
            continue
        attributes = inspect(row).attrs
        for kind, read in held:
            if any(name in attributes and attributes[name].history.has_changes() for name in read):
                kinds.add(kind)
    return kinds


def _note_vectors(session: Session, kinds: set[str] | frozenset[str]) -> None:
    if kinds:
        noted = session.info.setdefault(_VECTORS_CHANGED, set())
        noted |= kinds


@event.listens_for(Session, "do_orm_execute")
def _note_statement(state: ORMExecuteState) -> None:
    if state.is_select:
        return
    if state.is_insert or state.is_update or state.is_delete:
        table = getattr(state.statement, "table", None)
        name = getattr(table, "name", None)
        if _is_data(name):
            state.session.info[_CHANGED] = True
            _note_vectors(state.session, _kinds_of_statement(state, str(name)))


def _pending_data(session: Session) -> bool:
    return any(
        _is_data(getattr(row, "__tablename__", None)) for row in chain(session.new, session.dirty, session.deleted)
    )


@event.listens_for(Session, "after_flush")
def _note_flush(session: Session, _context: Any) -> None:
    # After the flush, before its objects' history is reset: what it wrote is still told apart.
    if not session.info.get(_CHANGED) and _pending_data(session):
        session.info[_CHANGED] = True
    _note_vectors(session, _kinds_of_objects(session))


@event.listens_for(Session, "before_commit")
def _bump_before_commit(session: Session) -> None:
    if session.info.get(_CHANGED) or _pending_data(session):
        # Objects not flushed yet are flushed by the commit, after this: counted now.
        kinds = set(session.info.get(_VECTORS_CHANGED) or ()) | _kinds_of_objects(session)
        _bump(session, kinds)
        session.info[_CHANGED] = False
        session.info.pop(_VECTORS_CHANGED, None)
        session.info[_BUMPED] = frozenset(kinds)


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    session.info.pop(_READ, None)
    session.info.pop(_VECTORS_READ, None)
    # Noted again by the commit's own flush of objects already counted before it.
    session.info.pop(_VECTORS_CHANGED, None)
    moved = session.info.pop(_BUMPED, None)
    if isinstance(moved, frozenset):  # empty when only the data version moved
        for callback in on_change:
            callback(moved)


@event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop(_CHANGED, None)
    session.info.pop(_BUMPED, None)
    session.info.pop(_READ, None)
    session.info.pop(_VECTORS_CHANGED, None)
    session.info.pop(_VECTORS_READ, None)


@event.listens_for(Session, "after_transaction_end")
def _forget_reads_at_the_end(session: Session, transaction: SessionTransaction) -> None:
    # A session closed without a commit or a rollback (a SQLite read closes without the rollback
    # hop, db.make_sessions) must not carry the versions it read into a later transaction.
    if transaction.parent is None:
        session.info.pop(_READ, None)
        session.info.pop(_VECTORS_READ, None)
