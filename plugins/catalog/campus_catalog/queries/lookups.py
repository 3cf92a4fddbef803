"""The catalog's small lookup tables (its terms, its subjects) held in process, per database.

Nearly every catalog call resolves a ``term`` (and a search often a ``subject``) before its own
query. Reading the six terms as ORM objects was a quarter of an in-process search_sections page
(about 1 ms of 4.4 on the demo campus, issue 16), for a table that changes a few times a year.

Correct, not just fast:

- Per database (the engine's URL): two campuses served by one process never see each other's.
- A change committed in this process (an import, the demo loader, a refresh) forgets every
  table at once (``data_version.on_change``), so a term imported a moment ago is found.
- A session with uncommitted catalog writes reads the tables itself and keeps nothing: what it
  sees may still be rolled back.
- A read that a commit overtook keeps nothing either (the ``_generation`` check), so a slow
  reader cannot put back what the commit just replaced.
- Another process's change: when the call already read the catalog's data version (the answer
  cache reads it on every tool call and REST request), a table held at another version is read
  again, so that path is exact; otherwise a table is kept at most ``MAX_AGE_S``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import data_version
from campus_catalog.models import Subject, Term

# How long a table read by this process is trusted when the call has no data version to compare.
MAX_AGE_S = 30.0

Rows = TypeVar("Rows")


@dataclass(frozen=True, slots=True)
class KnownTerm:
    """A term as the read paths use it: its keys and dates, not an ORM object bound to a session."""

    id: int
    uid: str
    name: str
    start_date: date
    end_date: date


# Every HeldTable made; and a count that grows with every forget, so that a read that started
# before a forget does not keep its rows.
_tables: list[HeldTable[Any]] = []
_generation = 0


@dataclass(frozen=True, slots=True)
class _Held(Generic[Rows]):
    rows: Rows
    read_at: float
    version: int | None


class HeldTable(Generic[Rows]):
    """One table of every database this process reads, held by the rules above, and how to read
    it. Every HeldTable is forgotten together (``forget``); the instructor roster is one too."""

    def __init__(self, read: Callable[[AsyncSession], Awaitable[Rows]]) -> None:
        self._read = read
        self._held: dict[str, _Held[Rows]] = {}
        _tables.append(self)

    def forget(self) -> None:
        self._held.clear()

    async def rows(self, session: AsyncSession) -> Rows:
        if data_version.writing(session):
            return await self._read(session)
        database = data_version.database_key(session)
        version = data_version.known(session)
        held = self._held.get(database)
        if held is not None and _still_good(held, version):
            return held.rows
        generation = _generation
        rows = await self._read(session)
        if generation == _generation:
            self._held[database] = _Held(rows, time.monotonic(), version)
        return rows


def _still_good(held: _Held[Rows], version: int | None) -> bool:
    if version is not None:
        return held.version == version
    return time.monotonic() - held.read_at < MAX_AGE_S


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


def forget() -> None:
    """Forget every held table, of every database (a catalog change was committed here)."""
    global _generation
    _generation += 1
    for table in _tables:
        table.forget()


data_version.on_change.append(forget)


async def terms(session: AsyncSession) -> Sequence[KnownTerm]:
    """The catalog's terms, newest first."""
    return await _terms.rows(session)


async def subjects(session: AsyncSession) -> Sequence[tuple[str, str]]:
    """The catalog's subjects as (code, name), by code."""
    return await _subjects.rows(session)
