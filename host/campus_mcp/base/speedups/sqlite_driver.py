"""SQLite through aiosqlite with one trip to its thread per statement, and none for a quick read.

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

Opt-in (``sqlite_reads_in_loop``, off by default), a quick read makes no trip at all
(:class:`ReadsHere`): a SELECT whose SQL ran in under ``QUICK_READ_S`` in the thread runs in the
event loop's thread from then on. Even one trip is two wake-ups (the thread's, then the loop's)
and a hand-over of the GIL each way, each waiting for a core on a loaded machine. A read run here still has its budget: SQLite's progress
handler stops it past ``QUICK_READ_S`` (nothing of a SELECT to undo), and it runs again in the
thread, which its SQL is sent to from then on. So the loop is never held longer than that by a
read, and a long one still leaves the loop free while SQLite works (the thread releases the GIL).
"""

from __future__ import annotations

import collections
import functools
import inspect
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from importlib.metadata import version
from typing import Any, cast

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection, AsyncAdapt_dbapi_cursor
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT

from campus_mcp.base.lru import LRU
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


def _run_timed(connection: sqlite3.Connection, operation: str, parameters: Any) -> tuple[_Outcome, float]:
    """:func:`_run_statement`, and the seconds it took in the thread."""
    started = time.perf_counter()
    outcome = _run_statement(connection, operation, parameters)
    return outcome, time.perf_counter() - started


def _run_many(connection: sqlite3.Connection, operation: str, seq_of_parameters: Any) -> _Outcome:
    """One statement for each set of parameters (executemany), in aiosqlite's thread."""
    cursor = connection.cursor()
    try:
        cursor.executemany(operation, seq_of_parameters)
        return cursor.description, [], cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


# A read that took less than this in the thread runs in the loop's thread from then on, and is
# stopped there (to run in the thread) if it takes longer: above a demo-campus page's statements,
# below a large campus's slow ones.
QUICK_READ_S = 0.002
# SQLite calls the budget's check every this many of its virtual machine instructions (tens of
# microseconds of work each time).
CHECK_EVERY = 4000
# SQL texts whose speed is known, per engine: a campus's reads have a few hundred.
MAX_READS_KNOWN = 2048


class ReadsHere:
    """Which reads of one engine run in the event loop's thread: the SQL texts of SELECTs seen
    quick in aiosqlite's thread, and not since stopped for running past the budget."""

    def __init__(self) -> None:
        self._quick: LRU[str, bool] = LRU(MAX_READS_KNOWN)

    def quick(self, operation: str) -> bool | None:
        """True to run here, False to send to the thread, None when not known yet."""
        return self._quick.get(operation)

    def timed(self, operation: str, seconds: float) -> None:
        """A read ran in the thread in ``seconds``: quick from now on, or not."""
        self._quick.put(operation, seconds < QUICK_READ_S)

    def stopped(self, operation: str) -> None:
        """A read ran past the budget here: it goes to the thread from now on."""
        self._quick.put(operation, False)


class _Budget:
    """SQLite's progress handler for a read run here: stops it once past its deadline."""

    __slots__ = ("deadline", "passed")

    def __init__(self) -> None:
        self.deadline = 0.0
        self.passed = False

    def __call__(self) -> int:
        if time.perf_counter() > self.deadline:
            self.passed = True
            return 1  # SQLite stops the statement: sqlite3.OperationalError "interrupted"
        return 0


def _select(operation: Any) -> bool:
    # Only a SELECT: it writes nothing, so stopping it half-way and running it again is safe.
    return isinstance(operation, str) and operation.startswith("SELECT")


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
        # A quick read runs here without awaiting anything (a coroutine still, so that
        # SQLAlchemy's AsyncConnection sees the await it requires).
        adapted = cast(OneTripConnection, self._adapt_connection)
        reads = adapted.reads if _select(operation) else None
        if reads is not None:
            outcome = adapted.read_here(operation, parameters)
            if outcome is not None:
                self._keep(outcome)
                return self
        async with adapted._execute_mutex:
            connection: Any = self._connection
            if reads is not None:
                # Timed each time it runs in the thread: a read stopped here only because the
                # machine took the core away is found quick again.
                outcome, seconds = await connection._execute(_run_timed, connection._conn, operation, parameters)
                reads.timed(operation, seconds)
                self._keep(outcome)
            else:
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
    __slots__ = ("_budget", "_here", "_thread_busy", "reads")
    _cursor_cls = OneTripCursor

    def __init__(
        self, dbapi: Any, connection: Any, reads: ReadsHere | None = None, skip_idle_rollback: bool = False
    ) -> None:
        super().__init__(dbapi, connection, skip_idle_rollback)
        self.reads = reads
        # Held while aiosqlite's thread runs anything of this connection (see _guard_thread):
        # a read runs here only when the thread is idle, never beside it.
        self._thread_busy = threading.Lock()
        self._budget = _Budget()
        # Whether reads may run here: unknown until the first one (see _may_read_here).
        self._here: bool | None = None if reads is not None else False
        if reads is not None:
            _guard_thread(connection, self._thread_busy)

    def read_here(self, operation: str, parameters: Any) -> _Outcome | None:
        """The outcome of a quick read run in this (the event loop's) thread, or None: the read
        is not known to be quick, the connection is in use or closed, or the read failed or ran
        past its budget here (the caller then sends it to the thread, which gives any error)."""
        reads = self.reads
        if reads is None or reads.quick(operation) is not True or self._execute_mutex.locked():
            return None
        aiosqlite_connection: Any = self._connection
        connection: sqlite3.Connection | None = aiosqlite_connection._connection
        if connection is None or not aiosqlite_connection._running or not self._thread_busy.acquire(blocking=False):
            return None
        try:
            # Not inside a write's transaction: a read there stays with the writes, in the thread.
            if connection.in_transaction or not self._may_read_here(connection):
                return None
            budget = self._budget
            budget.passed = False
            budget.deadline = time.perf_counter() + QUICK_READ_S
            connection.set_progress_handler(budget, CHECK_EVERY)
            try:
                return _run_statement(connection, operation, parameters)
            except sqlite3.Error:
                if budget.passed:
                    reads.stopped(operation)
                return None
            finally:
                connection.set_progress_handler(None, 0)
        finally:
            self._thread_busy.release()

    def _may_read_here(self, connection: sqlite3.Connection) -> bool:
        """Reads run here on a WAL database only, where a reader never waits for a writer (the
        busy timeout's wait would hold the loop), and on a connection usable from this thread."""
        if self._here is None:
            try:
                (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
                self._here = str(mode).lower() == "wal"
            except sqlite3.Error:  # made in the thread with check_same_thread (a custom creator)
                self._here = False
        return self._here


def _guard_thread(connection: Any, busy: threading.Lock) -> None:
    """Every function aiosqlite's thread runs for ``connection`` holds ``busy`` while it runs."""
    execute: Callable[..., Awaitable[Any]] = connection._execute

    def holding(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with busy:
            return fn(*args, **kwargs)

    async def guarded(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await execute(holding, fn, *args, **kwargs)

    connection._execute = guarded


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
    """:class:`SQLiteDBAPI` with :class:`OneTripCursor`, and with ``reads_in_loop`` quick reads
    run in the event loop's thread (:class:`ReadsHere`, one per engine)."""

    def __init__(self, *args: Any, reads_in_loop: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads = ReadsHere() if reads_in_loop else None

    def connect(self, *arg: Any, **kw: Any) -> OneTripConnection:
        # Usable from the loop's thread too; statements never overlap (the thread is held, see
        # OneTripConnection._thread_busy), and SQLite's own serialized mode guards its calls.
        if "async_creator_fn" not in kw:
            kw.setdefault("check_same_thread", False)
        stock = AsyncAdapt_aiosqlite_dbapi.connect(self, *arg, **kw)
        return OneTripConnection(self, stock._connection, self.reads, self.skip_idle_rollback)


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
        return OneTripDBAPI(
            aiosqlite,
            sqlite3,
            reads_in_loop=switches.sqlite_reads_in_loop,
            skip_idle_rollback=switches.sqlite_skip_idle_rollback,
        )
    if switches.sqlite_skip_idle_rollback:
        return SQLiteDBAPI(aiosqlite, sqlite3, skip_idle_rollback=True)
    return None
