"""Sessions for work that only reads (a lookup tool's query, a REST GET of the catalog): no
transaction, so on PostgreSQL one round trip per statement instead of a BEGIN before and a
ROLLBACK after (a catalog page: 3 round trips became 1), over the same engine and pool.

Asked for by name, never guessed: ``ToolContext.session(read_only=True)`` or
``Deployment.session(read_only=True)``. A write, DDL or row lock in such a session fails before
it reaches the database (:class:`WriteInReadSession`): without a transaction it could not be
rolled back, and a lock would end with its own statement.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.sql.dml import UpdateBase
from sqlalchemy.sql.elements import TextClause


class WriteInReadSession(InvalidRequestError):
    """A statement that writes (or locks rows) ran in a session opened for reading only."""


# The execution option that marks the connections of a read session.
READ_ONLY_OPTION = "campus_read_only"

# SQL given as words (text(), driver SQL) that a read session may run: a query, with no word in
# it that writes or locks (a data-modifying WITH, SELECT ... INTO, FOR UPDATE/SHARE).
_READ_STATEMENT = re.compile(r"\s*\(*\s*(SELECT|WITH|VALUES|EXPLAIN|SHOW)\b", re.IGNORECASE)
_WRITE_WORD = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE|INTO|TRUNCATE|SHARE)\b", re.IGNORECASE)
# A compiled SELECT's row lock: its last clause, so only the statement's tail is searched.
_LOCKING_TAIL = re.compile(r"\bFOR\s+(NO\s+KEY\s+UPDATE|UPDATE|KEY\s+SHARE|SHARE)\b[^()]*$", re.IGNORECASE)
LOCKING_TAIL_CHARS = 200

# One read sessionmaker per sessionmaker, made on first use; gone with the sessionmaker.
_MADE: weakref.WeakKeyDictionary[async_sessionmaker[AsyncSession], async_sessionmaker[AsyncSession]] = (
    weakref.WeakKeyDictionary()
)


class ReadSession(AsyncSession):
    """A session of :func:`read_sessions`: no transaction, and ``stream`` works on every database.

    A stream (``session.stream``, a ranking over thousands of vectors) reads through a server-side
    cursor, which PostgreSQL keeps only inside a transaction (asyncpg: "cursor cannot be created
    outside of a transaction"). So on PostgreSQL a read session's first stream begins one on the
    driver's connection, ``BEGIN READ ONLY`` (PostgreSQL itself then refuses a write in it too),
    and the session ends it with a ROLLBACK when it lets go of its connection: at ``close``,
    ``commit``, ``rollback`` or ``reset``. Two round trips, paid only by the sessions that stream,
    never by a page. On SQLite nothing changes."""

    # asyncpg's Transaction (asyncpg ships no type information).
    _read_transaction: Any = None

    async def stream(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        await self._hold_read_transaction()
        return await super().stream(statement, *args, **kwargs)

    async def stream_scalars(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        await self._hold_read_transaction()
        return await super().stream_scalars(statement, *args, **kwargs)

    async def _hold_read_transaction(self) -> None:
        if self._read_transaction is not None:
            return
        connection = await self.connection()
        if connection.dialect.name != "postgresql":
            return
        driver = (await connection.get_raw_connection()).driver_connection
        if driver is None or driver.is_in_transaction():
            return
        transaction = driver.transaction(readonly=True)
        await transaction.start()
        self._read_transaction = transaction

    async def _end_read_transaction(self) -> None:
        transaction, self._read_transaction = self._read_transaction, None
        if transaction is None:
            return
        try:
            await transaction.rollback()
        except BaseException:
            # A connection whose transaction could not end never goes back to the pool.
            await super().invalidate()
            raise

    async def commit(self) -> None:
        await self._end_read_transaction()
        await super().commit()

    async def rollback(self) -> None:
        await self._end_read_transaction()
        await super().rollback()

    async def reset(self) -> None:
        await self._end_read_transaction()
        await super().reset()

    async def close(self) -> None:
        await self._end_read_transaction()
        await super().close()


def read_sessions(sessions: async_sessionmaker[AsyncSession]) -> async_sessionmaker[AsyncSession]:
    """Sessions over the same engine and pool as ``sessions`` (same options) that open no
    transaction.

    PostgreSQL: the connection is in autocommit while such a session holds it. asyncpg's adapter
    then sends no BEGIN, and its switch to autocommit at checkout and back at checkin is made in
    the adapter, with no round trip; nothing was begun, so the pool's rollback at checkin sends
    nothing either. Each statement is then its own transaction. For reads that sees what a
    transaction would: at READ COMMITTED (PostgreSQL's default, and the host's) each statement of
    a transaction takes a new snapshot anyway, so an answer of several statements could already
    see an import commit between two of them; a catalog answer is public data that the next call
    reads afresh. A read that needs one snapshot or a lock keeps an ordinary session.

    SQLite: the connection is left as it is. Python's sqlite3 begins a transaction before a write
    only, and a session that only read closes without a rollback (``sqlite_skip_idle_rollback``,
    campus_mcp.base.speedups.sqlite_driver); setting aiosqlite's isolation level would cost a trip to
    its thread at checkout and another at checkin. Writes are refused all the same."""
    found = _MADE.get(sessions)
    if found is not None:
        return found
    bind = sessions.kw.get("bind")
    if not isinstance(bind, AsyncEngine):
        raise TypeError("read_sessions needs sessions bound to one engine (campus_mcp.base.db.make_sessions)")
    _refuse_writes(bind)
    if bind.dialect.name == "postgresql":
        reading = bind.execution_options(isolation_level="AUTOCOMMIT", **{READ_ONLY_OPTION: True})
    else:
        reading = bind.execution_options(**{READ_ONLY_OPTION: True})
    options = {key: value for key, value in sessions.kw.items() if key not in ("bind", "class_")}
    made = async_sessionmaker(reading, class_=ReadSession, **options)
    _MADE[sessions] = made
    return made


def _refuse_writes(engine: AsyncEngine) -> None:
    """Every statement on ``engine`` is checked before it is sent; only a read session's fail."""
    sync_engine = engine.sync_engine
    if not event.contains(sync_engine, "before_cursor_execute", _refuse_write):
        event.listen(sync_engine, "before_cursor_execute", _refuse_write)


def _refuse_write(
    connection: Connection, _cursor: Any, statement: str, _parameters: Any, context: Any, _executemany: bool
) -> None:
    if not connection.get_execution_options().get(READ_ONLY_OPTION):
        return
    compiled = getattr(context, "compiled", None)
    if compiled is not None and not isinstance(compiled.statement, TextClause):
        # SQLAlchemy's own statement says what it is. Its words are not searched: for a catalog
        # page's 4 KB of SQL that search cost more than a millisecond on the loaded machine.
        if not _compiled_write(context, compiled, statement):
            return
    elif _READ_STATEMENT.match(statement) and not _WRITE_WORD.search(statement):
        return
    first = " ".join(statement.split()[:4])
    raise WriteInReadSession(
        f"{first} ...: a statement that writes or locks rows, in a session opened for reading only "
        "(read_only=True, no transaction to roll it back). Open a session without read_only for it."
    )


def _compiled_write(context: Any, compiled: Any, sql: str) -> bool:
    """Whether a statement SQLAlchemy compiled writes, defines or locks: an insert, update,
    delete or DDL, a SELECT ... FOR UPDATE/SHARE (the lock clause ends the SQL the dialect
    wrote; SQLite's writes none), or a SELECT with a data-modifying WITH."""
    if context.isinsert or context.isupdate or context.isdelete or context.isddl:
        return True
    if _LOCKING_TAIL.search(sql[-LOCKING_TAIL_CHARS:]):
        return True
    return any(isinstance(cte.element, UpdateBase) for cte in getattr(compiled, "ctes", None) or ())
