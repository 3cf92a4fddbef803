"""A search's filter conditions built once per question, and reads of columns run as Core.

The statements themselves are built each call from the kept conditions: SQLAlchemy's own cache
of compiled statements (public, keyed by the statement's structure) compiles each shape once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from campus_mcp import LRU
from pydantic import BaseModel
from sqlalchemy import ColumnElement, Executable, Row
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

# Sets of filter values kept per process: a campus's students ask a few hundred distinct ones.
MAX_FILTER_SETS = 512


class KeptConditions:
    """A search's filter conditions, built once per distinct set of values and reused.

    Building a condition is SQLAlchemy's slowest step of a search (coercions, operator lookups
    and runtime protocol checks; docs/performance.md). Conditions are immutable, so one built for
    these values serves every later call with the same values, and SQLAlchemy memoizes the cache
    key of a condition on it, so a kept one is keyed once too.

    The key is every argument, whole: a pydantic model by all its fields (the page's offset and
    limit too, so a later filter reading any field can never be answered with another's
    conditions), a list as a tuple. Arguments that cannot be hashed are built each call.
    """

    def __init__(self, build: Callable[..., list[ColumnElement[bool]]]) -> None:
        self._build = build
        self._kept: LRU[tuple[Any, ...], tuple[ColumnElement[bool], ...]] = LRU(MAX_FILTER_SETS)

    def __call__(self, *args: Any) -> list[ColumnElement[bool]]:
        key = tuple(_key_of(arg) for arg in args)
        try:
            kept = self._kept.get(key)
        except TypeError:  # a value that cannot be hashed
            return self._build(*args)
        if kept is None:
            kept = self._kept.put(key, tuple(self._build(*args)))
        return list(kept)  # the caller's own list: it may add its own conditions

    def forget(self) -> None:
        self._kept.clear()


def _key_of(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return (type(value), *(_key_of(field) for field in value.__dict__.values()))
    if isinstance(value, list | tuple):
        return tuple(_key_of(item) for item in value)
    return value


async def read_rows(
    session: AsyncSession, statement: Executable, params: dict[str, Any]
) -> Sequence[Row[*tuple[Any, ...]]]:
    """The rows of a read of columns, run on the session's connection as a Core statement.

    ``session.execute`` runs even a select of columns through the ORM (its execution state,
    events and a row loader) for rows that are plain tuples anyway; the same statement on the session's connection (its transaction, its bind's
    options) gives the same rows. Run in one greenlet hop (``run_sync``), not one for the
    connection and another for the statement. Not for ORM entities, nor for writes."""
    return await session.run_sync(_read_rows, statement, params)


def _read_rows(session: Session, statement: Executable, params: dict[str, Any]) -> Sequence[Row[*tuple[Any, ...]]]:
    return session.connection().execute(statement, params).all()
