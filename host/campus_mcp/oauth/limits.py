"""The per-address key and a one-limit counter, for the OAuth side.

The limits of registration, token and revocation are counted with every other limit, on the same
counters (in process, or in Redis with several workers): ``campus_mcp.limits`` (its policy names
them ``oauth/register``, ``oauth/token`` and ``oauth/revoke``). The sign-in form keeps its own
failed-attempt limit in the database (``login_limit``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from campus_mcp.base.addresses import address_key
from campus_mcp.limits.counters import ProcessCounters

__all__ = ["RateLimiter", "SlidingWindowLimiter", "address_key"]


class RateLimiter(Protocol):
    async def hit(self, key: str) -> float | None:
        """Count one request for ``key``: None when it may go ahead, else the seconds to wait."""
        ...


class SlidingWindowLimiter:
    """At most ``limit`` requests per ``window_seconds`` for each key; a refused one is not counted."""

    def __init__(
        self,
        *,
        limit: int,
        window_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.limit = limit
        self.window = window_seconds
        self.counters = ProcessCounters(clock=clock, max_keys=max_keys)

    async def hit(self, key: str) -> float | None:
        verdict = await self.counters.hit(key, self.limit, self.window)
        return None if verdict.allowed else verdict.reset
