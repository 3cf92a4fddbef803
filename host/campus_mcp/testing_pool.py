"""The connection pool of a test harness on PostgreSQL: pooled on the test's event loop only.

A harness's app is used from two kinds of event loop. The test's own (the session's loop, where
the harness was made) runs the in-process MCP client, the jobs and the test's own sessions; the
REST client (Litestar's test client) and a browser test's server run the app on loops of their
own, each in a thread, for a while. An asyncpg connection belongs to the loop that opened it, so a
connection pooled on one loop and handed to another fails ("attached to a different loop").

The kit gave such an app no pool at all: every session opened a connection. On PostgreSQL that is
a new server process, its authentication and SQLAlchemy's setup queries, ~20-50 ms of the two
cores each time, and a test opened ~17 of them on average (1,949 for plugins/schedule/tests'
111 tests). This pool keeps connections on the loop the harness was made on, as a deployment's
pool does on its one loop, and opens and closes one per checkout on any other loop, as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import AsyncAdaptedQueuePool, ConnectionPoolEntry, NullPool, Pool

# The deployment's defaults (campus_mcp.db): a test's busiest moments (a few calls at once) fit.
POOL_SIZE = 5
POOL_OVERFLOW = 10


class HomeLoopPool(Pool):
    """Queue-pooled connections on ``home`` (the loop the harness was made on); on any other loop
    a connection per checkout, closed when checked in (SQLAlchemy's NullPool)."""

    def __init__(self, like: Pool, home: asyncio.AbstractEventLoop | None, pooled: Pool | None = None) -> None:
        # ``like``: the engine's pool, whose events (the dialect's connect setup, campus_mcp.db's
        # idle ping) this one and both of its pools keep.
        options: dict[str, Any] = {
            "recycle": like._recycle,
            "echo": like.echo,
            "logging_name": like._orig_logging_name,
            "reset_on_return": like._reset_on_return,
            "pre_ping": like._pre_ping,
            "dialect": like._dialect,
        }
        super().__init__(like._creator, _dispatch=like.dispatch, **options)
        self._home = home
        # A record (a pooled connection) goes back to the pool that made it when checked in.
        self._pooled = pooled or AsyncAdaptedQueuePool(
            self._creator, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, _dispatch=self.dispatch, **options
        )
        self._unpooled = NullPool(self._creator, _dispatch=self.dispatch, **options)

    def _on_home_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._home
        except RuntimeError:  # no loop running: not the home one
            return False

    def _here(self) -> Pool:
        return self._pooled if self._on_home_loop() else self._unpooled

    def _do_get(self) -> ConnectionPoolEntry:
        return self._here()._do_get()

    def _do_return_conn(self, record: ConnectionPoolEntry) -> None:
        # Reached only for a connection detached from its record: the record goes back to this loop's pool.
        self._here()._do_return_conn(record)

    def dispose(self) -> None:
        # Pooled connections can be closed only on their own loop. A REST client's app disposes of
        # the engine at its shutdown, on the client's loop: the home loop's connections stay.
        if self._on_home_loop():
            self._pooled.dispose()

    def recreate(self) -> HomeLoopPool:
        # Engine.dispose() swaps its pool for this one: the same queue, unless it was disposed of.
        return HomeLoopPool(self, self._home, None if self._on_home_loop() else self._pooled)

    def status(self) -> str:
        return f"HomeLoopPool on its home loop: {self._pooled.status()}"


def pool_on_this_loop(engine: AsyncEngine) -> None:
    """Give ``engine`` (made without a pool) a :class:`HomeLoopPool` whose home is the running loop
    (none outside one: then it never pools)."""
    try:
        home: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        home = None
    engine.sync_engine.pool = HomeLoopPool(engine.sync_engine.pool, home)
