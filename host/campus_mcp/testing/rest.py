"""The REST client of a test harness: the app served on the test's own event loop.

Litestar's ``AsyncTestClient`` runs the app, its lifespan and every request on a second event
loop, in a portal thread, while the harness's MCP client, its jobs and the test's own sessions
run on the test's loop. One app on two loops shares its asyncio objects between them (the
connection pool's queue, the access log's lock, the refresh queue), and none of those is
thread-safe: a waiter on one loop, woken from the other, is never run. Tests hung for good that
way in CI, every thread idle. This client serves the app on the loop it is used from, as
``campus-mcp serve`` does: requests through httpx's ASGI transport, the lifespan in a task of the
same loop. So the harness's app needs no pool of its own (it had one pooling per loop until then).
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Self, cast

import httpx
from litestar import Litestar

# The peer address Litestar's test client gave requests; the rate-limit and proxy tests expect it.
TEST_CLIENT_ADDRESS = ("testclient", 50000)


class RestClient(httpx.AsyncClient):
    """An httpx client of ``app`` on the current event loop; ``async with`` runs the app's lifespan
    (startup before the first request, shutdown at the end), as a server would."""

    def __init__(self, app: Litestar, *, base_url: str) -> None:
        super().__init__(
            # Litestar types its ASGI callable with its own event types, httpx with plain mappings.
            transport=httpx.ASGITransport(app=cast(Any, app), client=TEST_CLIENT_ADDRESS),
            base_url=base_url,
            follow_redirects=True,
        )
        self.app = app
        self._lifespan: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    async def __aenter__(self) -> Self:
        await super().__aenter__()
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stop = self._stop = asyncio.Event()

        async def serve() -> None:
            # One task enters and leaves the lifespan: the MCP session manager's task group in it
            # must be left by the task that entered it, and a fixture's setup and teardown are two.
            try:
                async with self.app.lifespan():
                    started.set_result(None)
                    await stop.wait()
            except BaseException as failure:
                if started.done():
                    raise
                # Litestar's lifespan runs in a task group: a failing startup hook arrives wrapped.
                while isinstance(failure, BaseExceptionGroup) and len(failure.exceptions) == 1:
                    failure = failure.exceptions[0]
                started.set_exception(failure)

        self._lifespan = asyncio.create_task(serve(), name="campus test client lifespan")
        try:
            await started
        except BaseException:
            await super().__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None = None,
        error: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        try:
            if self._stop is not None and self._lifespan is not None:
                self._stop.set()
                await self._lifespan
        finally:
            self._lifespan = self._stop = None
            await super().__aexit__(kind, error, traceback)
