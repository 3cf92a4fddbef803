"""SQLite through aiosqlite with one trip to its thread per statement.

aiosqlite runs each sqlite3 call in a thread of the connection, and SQLAlchemy's aiosqlite
adapter awaits four of them for every SELECT: open a cursor, execute, fetch all rows, close the
cursor. Each trip hands the GIL to that thread and back, and under load waits for a core
(figures: docs/performance.md).
This adapter runs the whole statement (cursor, execute, description, rows, row count, last row
id, close) as ONE function in that thread, then answers SQLAlchemy from what it brought back.

It is SQLAlchemy's own aiosqlite adapter but for its cursor, passed to the stock dialect as its
DBAPI module (``create_engine(module=...)``, a public parameter): the URL, the dialect, its
errors and server-side cursors (``session.stream``) are unchanged. It leans on private parts of
two libraries (``aiosqlite.Connection._execute`` and ``._conn``, the attributes and
``_execute_async`` hooks of ``AsyncAdapt_dbapi_cursor``), so it runs only on the versions it was
written against (:data:`WRITTEN_FOR`) with those attributes present (:func:`one_trip_supported`);
otherwise it logs one line and the stock adapter answers (slower, still right). Setting:
``sqlite_one_trip``.

The same adapter's connection sends no rollback for a connection with no transaction open
(``sqlite_skip_idle_rollback``): a session that only read closes with a rollback that SQLite
would ignore, but that aiosqlite still sends to its thread and waits for. SQLAlchemy has no event
that can skip a rollback (its dialect events cover execution and connecting only), so the DBAPI
connection's own ``rollback()`` (PEP 249) decides, reading ``in_transaction`` without a trip.

"""

from __future__ import annotations

import collections
import functools
import inspect
import sqlite3
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection, AsyncAdapt_dbapi_cursor
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT

from campus_mcp.base.speedups import Switches, turned_off

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


class SQLiteConnection(AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy's aiosqlite connection, that sends no rollback when SQLite has no transaction
    open on it (with ``skip_idle_rollback``): any write, an explicit BEGIN or a state it cannot
    read still rolls back."""

    __slots__ = ("skip_idle_rollback",)

    def __init__(self, dbapi: Any, connection: Any, skip_idle_rollback: bool = False) -> None:
        super().__init__(dbapi, connection)
        self.skip_idle_rollback = skip_idle_rollback

    def rollback(self) -> None:
        if self.skip_idle_rollback and _in_transaction(self._connection) is False:
            return
        super().rollback()


def _in_transaction(connection: Any) -> bool | None:
    """Whether SQLite has a transaction open on an aiosqlite connection (``sqlite3_get_autocommit``,
    read without a trip to its thread); None when it cannot tell (a closed connection)."""
    try:
        return bool(connection.in_transaction)
    except (AttributeError, ValueError, sqlite3.Error):
        return None


class OneTripConnection(SQLiteConnection):
    __slots__ = ()
    _cursor_cls = OneTripCursor


class SQLiteDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """SQLAlchemy's aiosqlite DBAPI module, its connections rolling back only a transaction
    (``skip_idle_rollback``)."""

    def __init__(self, *args: Any, skip_idle_rollback: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skip_idle_rollback = skip_idle_rollback

    def connect(self, *arg: Any, **kw: Any) -> SQLiteConnection:
        stock = super().connect(*arg, **kw)
        return SQLiteConnection(self, stock._connection, self.skip_idle_rollback)


class OneTripDBAPI(SQLiteDBAPI):
    """:class:`SQLiteDBAPI` with :class:`OneTripCursor`."""

    def connect(self, *arg: Any, **kw: Any) -> OneTripConnection:
        stock = AsyncAdapt_aiosqlite_dbapi.connect(self, *arg, **kw)
        return OneTripConnection(self, stock._connection, self.skip_idle_rollback)


# The releases the adapter was written and tested against; another one turns it off until its
# private parts are checked again (then add it here).
WRITTEN_FOR = {"sqlalchemy": ("2.1",), "aiosqlite": ("0.22",)}


@functools.cache
def one_trip_supported() -> tuple[str, ...]:
    """What the one-trip adapter needs of aiosqlite and SQLAlchemy and is missing; empty when
    everything it uses is where it was written against (checked once per process)."""
    missing = []
    for distribution, releases in WRITTEN_FOR.items():
        installed = version(distribution)
        if not installed.startswith(tuple(f"{release}." for release in releases)):
            missing.append(f"{distribution} {installed} (written for {', '.join(releases)})")
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
    if not hasattr(AsyncAdapt_dbapi_cursor, "_awaitable_cursor_close"):
        missing.append("AsyncAdapt_dbapi_cursor._awaitable_cursor_close")
    if list(inspect.signature(AsyncAdapt_aiosqlite_connection).parameters) != ["dbapi", "connection"]:
        missing.append("AsyncAdapt_aiosqlite_connection(dbapi, connection)")
    return tuple(missing)


def sqlite_module(switches: Switches) -> SQLiteDBAPI | None:
    """The DBAPI module to give ``create_engine(module=...)`` for ``sqlite+aiosqlite``, or None
    for SQLAlchemy's own (every SQLite speed-up off)."""
    one_trip = switches.sqlite_one_trip
    if one_trip and one_trip_supported():
        turned_off("sqlite_one_trip", one_trip_supported())
        one_trip = False
    if one_trip:
        return OneTripDBAPI(aiosqlite, sqlite3, skip_idle_rollback=switches.sqlite_skip_idle_rollback)
    if switches.sqlite_skip_idle_rollback:
        return SQLiteDBAPI(aiosqlite, sqlite3, skip_idle_rollback=True)
    return None
