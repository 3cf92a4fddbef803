"""Statements built once per shape of question, then run with each call's values.

Building a search page's statement (the filters, two correlated JSON subqueries, the
count) and SQLAlchemy's cache key of it cost about as much as running it on SQLite: ~2 ms of a
4.4 ms demo-campus page (issue 16). Two searches that differ only in values (another subject,
another offset) have the same statement but for its bound parameters.

So a statement is kept per *shape*: the structure of its filters, as SQLAlchemy's own cache key
sees it (everything but the bound values: which filters, their operators, any literal rendered
into the SQL). A call still builds its few filter conditions (cheap), takes their cache key,
and runs the kept statement with its own values in place of the first call's: the bound
parameters of two conditions of one structure come in the same order, which is how SQLAlchemy
itself reuses one compiled statement for both. Anything whose structure it cannot key (a cache
key of None) is built and run as before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import ColumnElement, Executable, Row
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

# Shapes kept per process: a campus's questions have a few dozen (which filters are set).
MAX_SHAPES = 256


class Shaped:
    """One kind of statement (a search page), kept per dialect and shape of its filters."""

    def __init__(self, build: Callable[[str, Sequence[ColumnElement[bool]]], Executable]) -> None:
        self._build = build
        self._kept: OrderedDict[tuple[Any, ...], tuple[Executable, tuple[str, ...]]] = OrderedDict()

    def statement(
        self, dialect: str, where: Sequence[ColumnElement[bool]], **params: Any
    ) -> tuple[Executable, dict[str, Any]]:
        """The statement for these filters, and the parameters to run it with (``params`` are the
        statement's own named ones, such as the page's offset and limit)."""
        keys = [condition._generate_cache_key() for condition in where]
        if any(key is None for key in keys):
            return self._build(dialect, where), params
        shape = (dialect, *(key.key for key in keys if key is not None))
        kept = self._kept.get(shape)
        if kept is None:
            statement = self._build(dialect, where)
            names = tuple(bound.key for key in keys if key is not None for bound in key.bindparams)
            kept = self._kept[shape] = (statement, names)
            if len(self._kept) > MAX_SHAPES:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(shape)
        statement, names = kept
        values = [bound.effective_value for key in keys if key is not None for bound in key.bindparams]
        return statement, {**dict(zip(names, values, strict=True)), **params}


# Sets of filter values kept per process: a campus's students ask a few hundred distinct ones.
MAX_FILTER_SETS = 512


class KeptConditions:
    """A search's filter conditions, built once per distinct set of values and reused.

    Building a condition is SQLAlchemy's slowest step of a search (40 to 300 us each: coercions,
    operator lookups and runtime protocol checks; the four of a days-and-times search ~1 ms of a
    ~4 ms page). Conditions are immutable, so one built for these values serves every later call
    with the same values, and their cache keys (memoized on them) make :class:`Shaped` cheap too.

    The key is every argument, whole: a pydantic model by all its fields (the page's offset and
    limit too, so a later filter reading any field can never be answered with another's
    conditions), a list as a tuple. Arguments that cannot be hashed are built each call.
    """

    def __init__(self, build: Callable[..., list[ColumnElement[bool]]]) -> None:
        self._build = build
        self._kept: OrderedDict[tuple[Any, ...], tuple[ColumnElement[bool], ...]] = OrderedDict()

    def __call__(self, *args: Any) -> list[ColumnElement[bool]]:
        key = tuple(_key_of(arg) for arg in args)
        try:
            kept = self._kept.get(key)
        except TypeError:  # a value that cannot be hashed
            return self._build(*args)
        if kept is None:
            kept = self._kept[key] = tuple(self._build(*args))
            if len(self._kept) > MAX_FILTER_SETS:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
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
    events and a row loader), ~0.1-0.3 ms a statement of a catalog page for rows that are plain
    tuples anyway; the same statement on the session's connection (its transaction, its bind's
    options) gives the same rows. Run in one greenlet hop (``run_sync``), not one for the
    connection and another for the statement. Not for ORM entities, nor for writes."""
    return await session.run_sync(_read_rows, statement, params)


def _read_rows(session: Session, statement: Executable, params: dict[str, Any]) -> Sequence[Row[*tuple[Any, ...]]]:
    return session.connection().execute(statement, params).all()
