"""The connection pool of a test harness: pooled on the test's event loop only.

A harness's app runs on the test's own loop (the session's loop, where the harness was made): the
in-process MCP client, the REST client (campus_mcp.testing_rest), the served campuses, the jobs and
the test's own sessions. Until the REST client was moved there it ran the app on a loop of its own,
in a thread, and a test may still reach the app from another loop (``asyncio.run`` in a thread). An
asyncpg connection belongs to the loop that opened it, so a connection pooled on one loop and handed
to another fails ("attached to a different loop"), and a checkout waiting in one loop's queue is
never woken by a connection given back from another.

The kit gave such an app no pool at all: every session opened a connection. On PostgreSQL that is
a new server process, its authentication and SQLAlchemy's setup queries, each time (905
connections for plugins/schedule/tests' 111 tests; 390 with this pool). This pool keeps
connections on the loop the harness was made on, as a deployment's pool does on its one loop, and
opens and closes one per checkout on any other loop, as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.pool import AsyncAdaptedQueuePool, ConnectionPoolEntry, NullPool, Pool

# Fewer than a deployment keeps (campus_mcp.db): a test's busiest moments are a few calls at once.
POOL_SIZE = 5
POOL_OVERFLOW = 10


class HomeLoopPool(Pool):
    """Queue-pooled connections on the loop it was made on (the harness's); on any other loop a
    connection per checkout, closed when checked in (SQLAlchemy's NullPool). Made by the engine
    (``poolclass=HomeLoopPool``), which hands it the creator, the dialect and the pool settings."""

    def __init__(self, creator: Any, *, pooled: Pool | None = None, **options: Any) -> None:
        super().__init__(creator, **options)
        try:
            self._home: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # made outside a loop: it never pools
            self._home = None
        # Made again by recreate(), and for the two pools: the events are this pool's own.
        self._made_with = (creator, {k: v for k, v in options.items() if k not in ("_dispatch", "events")})
        # Made at the first checkout, once the engine has set this pool's events (the dialect's
        # connect setup, campus_mcp.db's idle ping), which both copy. A record (a connection)
        # goes back to the pool that made it when checked in.
        self._pooled = pooled
        self._unpooled: Pool | None = None

    def _on_home_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._home
        except RuntimeError:  # no loop running: not the home one
            return False

    def _here(self) -> Pool:
        creator, options = self._made_with
        if not self._on_home_loop():
            if self._unpooled is None:
                self._unpooled = NullPool(creator, _dispatch=self.dispatch, **options)
            return self._unpooled
        if self._pooled is None:
            self._pooled = AsyncAdaptedQueuePool(
                creator, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, _dispatch=self.dispatch, **options
            )
        return self._pooled

    def _do_get(self) -> ConnectionPoolEntry:
        return self._here()._do_get()

    def _do_return_conn(self, record: ConnectionPoolEntry) -> None:
        # Reached only for a connection detached from its record: the record goes back to this loop's pool.
        self._here()._do_return_conn(record)

    def dispose(self) -> None:
        # Pooled connections can be closed only on their own loop. A REST client's app disposes of
        # the engine at its shutdown, on the client's loop: the home loop's connections stay.
        if self._on_home_loop() and self._pooled is not None:
            self._pooled.dispose()

    def recreate(self) -> HomeLoopPool:
        # Engine.dispose() swaps its pool for this one: the same queue, unless it was disposed of.
        creator, options = self._made_with
        again = HomeLoopPool(
            creator, pooled=None if self._on_home_loop() else self._pooled, _dispatch=self.dispatch, **options
        )
        again._home = self._home
        return again

    def status(self) -> str:
        return f"HomeLoopPool on its home loop: {self._pooled.status() if self._pooled else 'no connection yet'}"
