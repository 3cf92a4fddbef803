"""The database: one declarative base for the host and every plugin, async engines, sessions.

SQLite (a file under ``var/``) is the embedded default; PostgreSQL is used by URL. Plugins
subclass :class:`Base`; their tables reach the database through their own Alembic branch.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import DateTime, MetaData, TypeDecorator, event
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from campus_mcp.base.speedups import Switches

# Stable constraint names, so Alembic migrations are the same on SQLite and PostgreSQL.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware in UTC.

    SQLite has no time zones; without this, a value written aware comes back naive and
    comparisons with ``datetime.now(UTC)`` fail on one backend only.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTCDateTime column; pass an aware one")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL, None for an in-memory database (``sqlite://``, ``:memory:``, a
    ``mode=memory`` URI) or another engine."""
    if not url.startswith("sqlite") or "///" not in url or "mode=memory" in url:
        return None
    path = url.split("///", 1)[-1]
    return Path(path) if path and path != ":memory:" else None


# Connections kept per process, and opened past them at a busy moment (the settings
# database_pool_size and database_pool_overflow; the same total as SQLAlchemy's 5 and 10). With 5
# kept, 8 requests at once opened and closed 3 connections a round: on PostgreSQL each a TCP
# connect, TLS negotiation, startup and the JSON codecs' setup (seen in a profile of a loaded
# server); on SQLite each a file opened by a new
# aiosqlite thread, and its pragmas.
POOL_SIZE = 10
POOL_OVERFLOW = 5


def make_engine(
    url: str,
    *,
    timeout_seconds: float | None = None,
    pool: tuple[int, int] = (POOL_SIZE, POOL_OVERFLOW),
    speedups: Switches | None = None,
    **kwargs: Any,
) -> AsyncEngine:
    """An engine for ``url``. ``timeout_seconds`` (PostgreSQL): the longest wait for a new
    connection, a pooled one and one statement, so that a database that stops answering gives
    an error in bounded time instead of a request that hangs (``database_timeout_seconds``).
    ``pool`` (PostgreSQL and a SQLite file): the connections kept, and those opened past them at a
    busy moment (``database_pool_size``, ``database_pool_overflow``), unless ``kwargs`` say
    otherwise. ``speedups``: which of campus_mcp.base.speedups to use (by default the settings')."""
    if url.startswith("sqlite"):
        path = sqlite_file(url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # An in-memory database has a pool of its own kind (one connection), which takes no size.
            _sized_pool(kwargs, pool)
        if url.startswith("sqlite+aiosqlite") and "module" not in kwargs:
            # Imported here so that a PostgreSQL deployment does not load the SQLite adapters.
            from campus_mcp.base.speedups.sqlite_driver import sqlite_module

            module = sqlite_module(speedups if speedups is not None else Switches.from_environment())
            if module is not None:
                kwargs["module"] = module
        engine = create_async_engine(url, connect_args={"timeout": 30}, **kwargs)

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            # WAL lets the scheduler write job runs while requests read.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    _sized_pool(kwargs, pool)
    if timeout_seconds is not None and "poolclass" not in kwargs:
        kwargs.setdefault("pool_timeout", timeout_seconds)
    if timeout_seconds is not None:
        # asyncpg's own: "timeout" bounds connecting, "command_timeout" each statement.
        kwargs["connect_args"] = {"timeout": timeout_seconds, "command_timeout": timeout_seconds} | dict(
            kwargs.get("connect_args", {})
        )
    if url.startswith("postgresql+asyncpg"):
        # Every statement planned for its values: after five runs of a prepared statement
        # PostgreSQL may keep a generic plan, blind to them (a days-and-times page of the
        # --scale 67 campus took three times as long from the third call); planning is cheap.
        # No JIT: its compiling (longer than the instructor search of --scale 67 it compiled)
        # is never won back by a catalog read, which touches at most a term's sections.
        connect_args = dict(kwargs.get("connect_args", {}))
        connect_args["server_settings"] = {"plan_cache_mode": "force_custom_plan", "jit": "off"} | dict(
            connect_args.get("server_settings", {})
        )
        kwargs["connect_args"] = connect_args
    engine = create_async_engine(url, **kwargs)
    _ping_when_idle(engine)
    return engine


# A pooled connection that answered this recently is not pinged when it is checked out again.
PING_AFTER_IDLE_S = 2.0
_CHECKED_IN_AT = "campus_checked_in_at"


def _sized_pool(kwargs: dict[str, Any], pool: tuple[int, int]) -> None:
    """``pool``'s sizes in ``kwargs`` for SQLAlchemy's queue pool, unless they name a pool of their own."""
    if "poolclass" not in kwargs:
        kwargs.setdefault("pool_size", pool[0])
        kwargs.setdefault("max_overflow", pool[1])


def _ping_when_idle(engine: AsyncEngine) -> None:
    """A connection the database dropped (a restart, a network cut) is replaced at checkout, so
    the server recovers by itself once the database answers again: SQLAlchemy's pre-ping, but
    only for a connection idle ``PING_AFTER_IDLE_S`` or more. asyncpg's ping is three round trips
    (BEGIN, an empty query, ROLLBACK), half of a catalog call's six on PostgreSQL, for a
    connection that answered a moment ago. A connection lost while busy fails its statement as
    a disconnection instead; SQLAlchemy then replaces every connection of the pool, and the
    call says the database could not be reached (``DATABASE_UNREACHABLE_TOOL_TEXT``)."""
    pool = engine.sync_engine.pool
    dialect = engine.sync_engine.dialect

    @event.listens_for(pool, "checkin")
    def _checked_in(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_CHECKED_IN_AT] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        # No mark: a connection opened for this checkout (the mark goes with an invalidation).
        checked_in = record.info.get(_CHECKED_IN_AT)
        if checked_in is None or time.monotonic() - checked_in < PING_AFTER_IDLE_S:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as exc:
            # The pool drops this connection and opens another (or fails saying why).
            raise DisconnectionError(f"an idle pooled connection no longer answers: {type(exc).__name__}") from exc


def database_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) says the database could not be reached in time:
    refused or cut connections and timeouts, as opposed to a bug or a bad query."""
    seen: BaseException | None = exc
    for _ in range(10):  # the chain is short; a bound keeps a cyclic one from looping
        if seen is None:
            return False
        if isinstance(seen, OSError | TimeoutError):
            return True
        if isinstance(seen, DBAPIError) and seen.connection_invalidated:
            return True
        if type(seen).__name__ in _UNREACHABLE_DRIVER_ERRORS:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


# asyncpg's names for a connection that is gone, matched by name so this module does not import
# the PostgreSQL driver on a SQLite deployment.
_UNREACHABLE_DRIVER_ERRORS = frozenset(
    {"ConnectionDoesNotExistError", "ConnectionFailureError", "CannotConnectNowError"}
)


def make_sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


# What a client is told while the database is unreachable: what happened and what to do.
DATABASE_UNREACHABLE_TEXT = (
    "The campus database cannot be reached right now, so this could not be answered. "
    "Nothing was changed. Try again in a minute."
)
DATABASE_UNREACHABLE_TOOL_TEXT = (
    "{tool} could not run: the campus database cannot be reached right now (nothing was changed). "
    "Try the call again in a minute; until then, answer without this tool and say that the campus "
    "data is unavailable."
)
