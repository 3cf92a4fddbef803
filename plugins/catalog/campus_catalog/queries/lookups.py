"""The catalog's small lookup tables (its terms, its subjects) held in process, per database.

Nearly every catalog call resolves a ``term`` (and a search often a ``subject``) before its own
query. Reading the six terms as ORM objects was a quarter of an in-process search_sections page on
the demo campus, for a table that changes a few times a year.

Correct, not just fast:

- Per database (the engine's URL): two campuses served by one process never see each other's.
- A change committed in this process (an import, the demo loader, a refresh) forgets the tables
  it can have changed (``data_version.on_change``), so a term imported a moment ago is found.
- A session with uncommitted catalog writes reads the tables itself and keeps nothing: what it
  sees may still be rolled back.
- A read that a commit overtook keeps nothing either (each table's generation check), so a slow
  reader cannot put back what the commit just replaced.
- Another process's change: a held table is always compared with the version in the database.
  The call's session reads the versions once (one small query, none when the answer cache read
  them already for its key), and a table held at another version is read again. One rule, no
  time to trust a table for: every committed catalog write moves the version.

Which version: the terms and subjects (a few rows, cheap to read) follow the data version, which
every catalog commit moves. A table slow to read names a kind of ``data_version.HELD_KINDS``
instead (the instructor roster: ``data_version.ROSTER``), and follows that kind's version, which
only a write of what it reads moves: a seat refresh does not read 20,100 names again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import data_version
from campus_catalog.models import Subject, Term

Rows = TypeVar("Rows")


@dataclass(frozen=True, slots=True)
class KnownTerm:
    """A term as the read paths use it: its keys and dates, not an ORM object bound to a session."""

    id: int
    uid: str
    name: str
    start_date: date
    end_date: date


# Every HeldTable made.
_tables: list[HeldTable[Any]] = []


@dataclass(frozen=True, slots=True)
class _Held(Generic[Rows]):
    rows: Rows
    version: int


class HeldTable(Generic[Rows]):
    """One table of every database this process reads, held by the rules above, and how to read
    it: keyed by the data version, or with ``kind`` by that kind's version (``HELD_KINDS``).
    Every HeldTable a commit can have changed is forgotten together (``forget``); the instructor
    roster is one too."""

    def __init__(self, read: Callable[[AsyncSession], Awaitable[Rows]], kind: str | None = None) -> None:
        if kind is not None and kind not in data_version.HELD_KINDS:
            raise ValueError(f"{kind!r} is not a kind with a version of its own: {data_version.HELD_KINDS}")
        self._read = read
        self.kind = kind
        self._held: dict[str, _Held[Rows]] = {}
        # Grows with every forget, so that a read that started before one does not keep its rows.
        self._generation = 0
        _tables.append(self)

    def forget(self) -> None:
        self._generation += 1
        self._held.clear()

    async def rows(self, session: AsyncSession) -> Rows:
        if data_version.writing(session):
            return await self._read(session)
        database = data_version.database_key(session)
        version = await data_version.version_of(session, self.kind)
        held = self._held.get(database)
        if held is not None and held.version == version:
            return held.rows
        generation = self._generation
        rows = await self._read(session)
        if generation == self._generation:
            self._held[database] = _Held(rows, version)
        return rows


async def _read_terms(session: AsyncSession) -> tuple[KnownTerm, ...]:
    rows = await session.execute(
        select(Term.id, Term.uid, Term.name, Term.start_date, Term.end_date).order_by(Term.start_date.desc())
    )
    return tuple(KnownTerm(*row) for row in rows)


async def _read_subjects(session: AsyncSession) -> tuple[tuple[str, str], ...]:
    rows = await session.execute(select(Subject.code, Subject.name).order_by(Subject.code))
    return tuple((code, name) for code, name in rows)


_terms: HeldTable[tuple[KnownTerm, ...]] = HeldTable(_read_terms)
_subjects: HeldTable[tuple[tuple[str, str], ...]] = HeldTable(_read_subjects)


def forget(moved: Collection[str] | None = None) -> None:
    """Forget the held tables a commit here can have changed, of every database: those keyed by
    the data version, and those of the kinds it ``moved`` (``data_version.on_change``); every
    table when ``moved`` is None."""
    for table in _tables:
        if moved is None or table.kind is None or table.kind in moved:
            table.forget()


data_version.on_change.append(forget)


async def terms(session: AsyncSession) -> Sequence[KnownTerm]:
    """The catalog's terms, newest first."""
    return await _terms.rows(session)


async def subjects(session: AsyncSession) -> Sequence[tuple[str, str]]:
    """The catalog's subjects as (code, name), by code."""
    return await _subjects.rows(session)
