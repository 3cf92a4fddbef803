"""One scheduler across every process and machine: an election on a lock the database engine holds.

Every ``campus-mcp serve`` (with ``CAMPUS_MCP_SCHEDULER`` on, the default) and every
``campus-mcp worker`` takes part. The one that holds the lock runs the scheduler; the others are
standbys that try again every ``scheduler_retry_seconds``, so when the scheduler's process dies
(SIGKILL, a lost machine) a standby takes over within a few of those intervals, and at once after a
SIGTERM, which releases the lock on the way out. A deployment that wants the web workers never to
run jobs turns ``CAMPUS_MCP_SCHEDULER`` off on them and runs ``campus-mcp worker`` processes.

The lock:

- PostgreSQL: a session advisory lock (``pg_try_advisory_lock``), local to the campus's database,
  held on a connection of its own, outside the request pool (a pooled connection would be handed to
  a request, or closed by the pool, and take the lock with it). The connection is in autocommit, so
  it never holds a transaction open, and asks the server for TCP keep-alives: when the scheduler's
  machine vanishes without closing the connection the server drops it within about half a minute,
  which frees the lock. The holder checks its connection every interval and stops its scheduler the
  moment the connection is gone (it may no longer hold the lock).
- SQLite: an exclusive ``flock`` on a file next to the database (``campus.db.scheduler.lock``). The
  kernel releases it when the process ends however it ends. Only processes of one machine share a
  SQLite file, so this is every process there is.
- An in-memory SQLite database lives in one process: that process is the scheduler.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from campus_mcp.base.db import sqlite_file

log = logging.getLogger(__name__)

# The advisory lock's key: a fixed 64-bit number made from the name, the same in every process.
SCHEDULER_LOCK_KEY = int.from_bytes(hashlib.sha256(b"campus-mcp scheduler").digest()[:8], "big", signed=True)
# The server drops a dead lock connection after idle + interval * count seconds (10 + 5 * 3).
_KEEPALIVE = {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3"}


class SchedulerLock(Protocol):
    """What the election needs of a lock; every method may raise when the database is unreachable."""

    async def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; True when this process now holds it."""

    async def still_held(self) -> bool:
        """False when the lock may have been lost (its connection is gone)."""

    async def release(self) -> None:
        """Let go of the lock (a standby can take it at once); safe to call when not held."""


class PostgresLock:
    """The advisory lock on a dedicated connection (see the module's docstring)."""

    def __init__(self, url: str, timeout_seconds: float) -> None:
        self._timeout = timeout_seconds
        self._engine: AsyncEngine = create_async_engine(
            url,
            poolclass=NullPool,
            connect_args={
                "timeout": timeout_seconds,
                "command_timeout": timeout_seconds,
                "server_settings": {"application_name": "campus-mcp scheduler lock", **_KEEPALIVE},
            },
        )
        self._connection: AsyncConnection | None = None

    async def try_acquire(self) -> bool:
        if self._connection is None:
            connection = await self._engine.connect()
            self._connection = await connection.execution_options(isolation_level="AUTOCOMMIT")
        try:
            got = await self._connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": SCHEDULER_LOCK_KEY})
        except BaseException:
            await self._drop()
            raise
        return bool(got)

    async def still_held(self) -> bool:
        if self._connection is None:
            return False
        try:
            await self._connection.scalar(text("SELECT 1"))
        except Exception:
            await self._drop()
            return False
        return True

    async def release(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):  # a dead connection has released it already
                await self._connection.scalar(text("SELECT pg_advisory_unlock(:key)"), {"key": SCHEDULER_LOCK_KEY})
        await self._drop()
        await self._engine.dispose()

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.close(), self._timeout)


class FileLock:
    """An exclusive ``flock`` on ``path`` (see the module's docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    async def try_acquire(self) -> bool:
        if self._file is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        file = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            return False
        # For a person looking at the file: which process runs the scheduler.
        file.truncate(0)
        file.write(f"{os.getpid()}\n")
        file.flush()
        self._file = file
        return True

    async def still_held(self) -> bool:
        return self._file is not None

    async def release(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            fcntl.flock(file.fileno(), fcntl.LOCK_UN)
            file.close()


class ProcessLock:
    """An in-memory database: only this process can see it, so this process schedules."""

    async def try_acquire(self) -> bool:
        return True

    async def still_held(self) -> bool:
        return True

    async def release(self) -> None:
        return None


def scheduler_lock(database_url: str, timeout_seconds: float) -> SchedulerLock:
    if database_url.startswith("postgresql"):
        return PostgresLock(database_url, timeout_seconds)
    path = sqlite_file(database_url)
    if path is not None:
        return FileLock(path.with_name(path.name + ".scheduler.lock"))
    return ProcessLock()


class Election:
    """Runs ``lead`` while this process holds ``lock`` and ``step_down`` when it stops holding it.

    ``lead`` starts the scheduler (and records the runs the last holder left unfinished);
    ``step_down`` stops it. Neither is called twice in a row.
    """

    def __init__(
        self,
        lock: SchedulerLock,
        *,
        lead: Callable[[], Awaitable[None]],
        step_down: Callable[[], Awaitable[None]],
        retry_seconds: float,
        name: str = "this process",
    ) -> None:
        self.lock = lock
        self._lead = lead
        self._step_down = step_down
        self._retry = retry_seconds
        self._name = name
        self.leading = False
        self._task: asyncio.Task[None] | None = None
        self._said_unreachable = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="scheduler election")

    async def stop(self) -> None:
        """Stop the scheduler if it runs here and release the lock (a standby takes over at once)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.leading:
            self.leading = False
            await self._step_down()
        await self.lock.release()

    async def _loop(self) -> None:
        while True:
            await self._turn()
            await asyncio.sleep(self._retry)

    async def _turn(self) -> None:
        try:
            if not self.leading:
                if await self.lock.try_acquire():
                    try:
                        await self._lead()
                    except BaseException:
                        await self.lock.release()  # not scheduling: let a standby have it
                        raise
                    self.leading = True
                    log.info("%s is the scheduler now (it holds the scheduler lock)", self._name)
            elif not await self.lock.still_held():
                self.leading = False
                log.warning("%s lost the scheduler lock (its database connection is gone); jobs stop here", self._name)
                await self._step_down()
            self._said_unreachable = False
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # The database is down or refusing: no scheduler here for now; the next turn tries again.
            if not self._said_unreachable:
                log.warning("scheduler election: the lock cannot be taken now (%s); trying again", type(exc).__name__)
                self._said_unreachable = True
