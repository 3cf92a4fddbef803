"""SQLite through aiosqlite with one trip to its thread per statement.

aiosqlite runs each sqlite3 call in a thread of the connection, and SQLAlchemy's aiosqlite
adapter awaits four of them for every SELECT: open a cursor, execute, fetch all rows, close the
cursor. Each trip hands the GIL to that thread and back; under load one costs about a
millisecond, most of what separated a demo-campus page in process from its SQL time (issue 16).
This adapter runs the whole statement (cursor, execute, description, rows, row count, last row
id, close) as ONE function in that thread, then answers SQLAlchemy from what it brought back.

It is SQLAlchemy's own aiosqlite adapter but for its cursor, passed to the stock dialect as its
DBAPI module (``create_engine(module=...)``, a public parameter): the URL, the dialect, its
errors and server-side cursors (``session.stream``) are unchanged. It leans on private parts of
two libraries, pinned in constraints.txt (SQLAlchemy 2.1.9, aiosqlite 0.22.1):
``aiosqlite.Connection._execute`` and ``._conn``, and the attributes and ``_execute_async`` hooks
of ``AsyncAdapt_dbapi_cursor``. :func:`one_trip_supported` checks them; when an upgrade has moved
them the engine falls back to the stock adapter (slower, still right) and
``tests/test_sqlite_one_trip.py`` fails, naming what moved.
"""

from __future__ import annotations

import collections
import functools
import inspect
import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection, AsyncAdapt_dbapi_cursor
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT

# What a statement brings back from the thread: description, rows, rowcount, lastrowid.
_Outcome = tuple[Any, list[Any], int, int | None]


def _run_statement(connection: sqlite3.Connection, operation: str, parameters: Any) -> _Outcome:
    """One statement, in aiosqlite's thread, from its cursor to its closing."""
    cursor = connection.cursor()
    try:
        if parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        # Read after the rows: for a statement with RETURNING, SQLite counts rows as they come.
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


def _run_many(connection: sqlite3.Connection, operation: str, seq_of_parameters: Any) -> _Outcome:
    """One statement for each set of parameters (executemany), in aiosqlite's thread."""
    cursor = connection.cursor()
    try:
        cursor.executemany(operation, seq_of_parameters)
        return cursor.description, [], cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneTripCursor(AsyncAdapt_aiosqlite_cursor):
    """A client-side cursor that holds no aiosqlite cursor: each statement opens and closes its
    own in the connection's thread and brings its rows back (as the stock cursor does, buffered)."""

    __slots__ = ("_arraysize", "_description", "_lastrowid", "_rowcount")

    # Nothing to close in the thread: SQLAlchemy's soft close then only memoizes nothing.
    _awaitable_cursor_close = False

    def __init__(self, adapt_connection: AsyncAdapt_dbapi_connection) -> None:
        # Not the base __init__: that opens an aiosqlite cursor, a trip of its own.
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: int | None = None
        self._arraysize = 1

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> int:
        return self._lastrowid  # type: ignore[return-value]  # None before an insert, as sqlite3's

    @property
    def arraysize(self) -> int:
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._arraysize = value

    def close(self) -> None:
        self._rows.clear()

    def _keep(self, outcome: _Outcome) -> None:
        self._description, rows, self._rowcount, self._lastrowid = outcome
        self._rows = collections.deque(rows)

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        async with self._adapt_connection._execute_mutex:
            connection: Any = self._connection
            self._keep(await connection._execute(_run_statement, connection._conn, operation, parameters))
        return self

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        async with self._adapt_connection._execute_mutex:
            connection: Any = self._connection
            self._keep(await connection._execute(_run_many, connection._conn, operation, seq_of_parameters))
        return self


class OneTripConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneTripCursor


class OneTripDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """SQLAlchemy's aiosqlite DBAPI module, its connections with :class:`OneTripCursor`."""

    def connect(self, *arg: Any, **kw: Any) -> OneTripConnection:
        stock = super().connect(*arg, **kw)
        return OneTripConnection(self, stock._connection)


@functools.cache
def one_trip_supported() -> tuple[str, ...]:
    """What the one-trip adapter needs of aiosqlite and SQLAlchemy and is missing; empty when
    everything it uses is where it was written against (checked once per process)."""
    missing = []
    execute = getattr(aiosqlite.Connection, "_execute", None)
    if execute is None or list(inspect.signature(execute).parameters)[:2] != ["self", "fn"]:
        missing.append("aiosqlite.Connection._execute(fn, *args)")
    if not isinstance(getattr(aiosqlite.Connection, "_conn", None), property):
        missing.append("aiosqlite.Connection._conn")
    slots: Sequence[str] = AsyncAdapt_dbapi_cursor.__slots__
    for name in ("_adapt_connection", "_connection", "_rows", "_soft_closed_memoized"):
        if name not in slots:
            missing.append(f"AsyncAdapt_dbapi_cursor.{name}")
    for hook in ("_execute_async", "_executemany_async", "_async_soft_close"):
        if not inspect.iscoroutinefunction(getattr(AsyncAdapt_dbapi_cursor, hook, None)):
            missing.append(f"AsyncAdapt_dbapi_cursor.{hook}")
    # The stock execute and executemany must still hand the statement to those hooks, and the
    # soft close still skip a cursor whose close is not awaited (read from their source).
    uses = (
        ("execute", "_execute_async"),
        ("executemany", "_executemany_async"),
        ("_async_soft_close", "_awaitable_cursor_close"),
    )
    for method, used in uses:
        try:
            source = inspect.getsource(getattr(AsyncAdapt_dbapi_cursor, method))
        except (OSError, TypeError):
            continue  # no source installed: the structural checks above stand alone
        if used not in source:
            missing.append(f"AsyncAdapt_dbapi_cursor.{method} using {used}")
    if list(inspect.signature(AsyncAdapt_aiosqlite_connection).parameters) != ["dbapi", "connection"]:
        missing.append("AsyncAdapt_aiosqlite_connection(dbapi, connection)")
    return tuple(missing)


def one_trip_module() -> OneTripDBAPI | None:
    """The DBAPI module to give ``create_engine(module=...)`` for ``sqlite+aiosqlite``, or None
    when the libraries have moved what it relies on (the stock adapter is used then)."""
    if one_trip_supported():
        return None
    return OneTripDBAPI(aiosqlite, sqlite3)
