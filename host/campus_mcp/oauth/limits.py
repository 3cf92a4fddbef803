"""Counting requests per key (an address) in a sliding window, to refuse floods.

The counters live in this process: with several workers each counts its own share, so a limit
of N is at most N per worker. Issue 15 moves them to Redis; anything with ``hit`` will do.
"""

from __future__ import annotations

import ipaddress
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol


def address_key(host: str) -> str:
    """Whom a per-address limit counts: an IPv4 address, or the /64 network of an IPv6 one
    (one subscriber holds a whole /64, so counting single IPv6 addresses would count nothing)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else address)


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
        self.clock = clock
        # Bounds the memory a flood from many addresses can take.
        self.max_keys = max_keys
        self._times: dict[str, deque[float]] = {}

    async def hit(self, key: str) -> float | None:
        now = self.clock()
        times = self._times.setdefault(key, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.limit:
            return times[0] + self.window - now
        times.append(now)
        if len(self._times) > self.max_keys:
            self._forget(now)
        return None

    def _forget(self, now: float) -> None:
        """Drop keys with nothing in the window; if that is not enough, the least recent ones."""
        for key in [k for k, t in self._times.items() if not t or t[-1] <= now - self.window]:
            del self._times[key]
        if len(self._times) > self.max_keys:
            by_last = sorted(self._times, key=lambda k: self._times[k][-1])
            for key in by_last[: len(self._times) - self.max_keys]:
                del self._times[key]
