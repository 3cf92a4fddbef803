"""Pacing of upstream requests: at most N requests a minute, spaced evenly.

Banner failed after about 40 requests in one minute (seed 000), and it fails the whole session,
not just the request over the limit, so a burst followed by a pause is worse than an even pace.
One :class:`Pacer` is shared by everything that reads one Banner in one process (the nightly
sync, the seat refresh, the stale-section refresh), so their requests add up to one pace.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class Pacer:
    def __init__(
        self,
        requests_per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.interval = 60.0 / requests_per_minute
        self._clock = clock
        self._sleep = sleep
        self._next_slot: float | None = None
        self._lock = asyncio.Lock()

    async def wait_turn(self) -> None:
        """Return when the next request may go. Slots are handed out in call order."""
        async with self._lock:
            now = self._clock()
            slot = now if self._next_slot is None else max(now, self._next_slot)
            self._next_slot = slot + self.interval
            delay = slot - now
            if delay > 0:
                await self._sleep(delay)


_shared: dict[tuple[str, float, int], Pacer] = {}


def shared_pacer(upstream: str, requests_per_minute: float) -> Pacer:
    """The process-wide pacer of one upstream (by base URL), so that all its readers share a pace.

    Keyed by the running event loop too: an asyncio lock belongs to one loop, and a command-line
    run starts its own.
    """
    key = (upstream, requests_per_minute, id(asyncio.get_running_loop()))
    pacer = _shared.get(key)
    if pacer is None:
        pacer = _shared[key] = Pacer(requests_per_minute)
    return pacer
