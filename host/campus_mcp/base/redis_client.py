"""The one way the host opens the shared store, Redis at ``CAMPUS_MCP_REDIS_URL``.

The rate-limit counters, the platform-range copy and the answer cache each hold a client of their
own (each with the wait it can afford: a limit check must not hold up a request for long), but they
open it here, so the driver's options are chosen once. ``redis`` is imported on use: a deployment
without Redis never loads it.
"""

from __future__ import annotations

from typing import Any


def redis_client(url: str, *, timeout_seconds: float) -> Any:
    """A ``redis.asyncio.Redis`` for ``url`` that connects on first use and gives up on a connect or a
    reply after ``timeout_seconds``, so an unreachable Redis costs a bounded wait, never a hang."""
    import redis.asyncio as redis_asyncio

    return redis_asyncio.Redis.from_url(url, socket_timeout=timeout_seconds, socket_connect_timeout=timeout_seconds)
