"""Where the rate-limit counts live: in this process, or in Redis shared by every worker.

Both count the same way, a sliding log: a key holds the times of its requests inside the window;
a request is let through while fewer than ``limit`` are inside, and a refused one is not counted
(a client that keeps hammering does not push its own wait further out). The verdict says how many
are left and how long until the oldest leaves the window, which is when one more may go.

With Redis the whole check-and-count is one Lua script, so two workers hitting the same key at
once cannot both read 99 and both write 100: Redis runs a script alone. The script takes the
time from Redis itself (``TIME``), so the workers' clocks need not agree.

Redis unreachable: the counters fail open (the request goes ahead) and log one warning per
minute, not per request; with ``CAMPUS_MCP_REDIS_FAIL_CLOSED`` they refuse instead.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from campus_mcp.base.redis_client import redis_client

log = logging.getLogger(__name__)

# How often the "Redis is unreachable" warning may repeat.
WARNING_INTERVAL_SECONDS = 60.0
# A refusal while Redis is down and the limits fail closed: when to try again.
FAIL_CLOSED_RETRY_SECONDS = 5.0
# A Redis call that takes longer than this counts as Redis being down: a limit must not stall requests.
REDIS_TIMEOUT_SECONDS = 0.5


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One counted (or refused) request: ``reset`` is the seconds until one more may go."""

    allowed: bool
    remaining: int
    reset: float
    # Refused because the counters cannot be reached (Redis down, fail closed), not for the count.
    unavailable: bool = False


class Counters(Protocol):
    async def hit(self, key: str, limit: int, window: float) -> Verdict:
        """Count one request for ``key`` if fewer than ``limit`` are in the last ``window`` seconds."""
        ...

    async def close(self) -> None: ...


class ProcessCounters:
    """The counts of one process: enough for one worker."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 10_000) -> None:
        self.clock = clock
        # Bounds the memory a flood from many addresses can take.
        self.max_keys = max_keys
        self._times: dict[str, deque[float]] = {}

    async def hit(self, key: str, limit: int, window: float) -> Verdict:
        now = self.clock()
        times = self._times.setdefault(key, deque())
        while times and times[0] <= now - window:
            times.popleft()
        if len(times) >= limit:
            return Verdict(False, 0, times[0] + window - now if times else window)
        times.append(now)
        if len(self._times) > self.max_keys:
            self._forget(now, window)
        return Verdict(True, limit - len(times), times[0] + window - now)

    def _forget(self, now: float, window: float) -> None:
        """Drop keys with nothing in the window; if that is not enough, the least recent ones."""
        for key in [k for k, t in self._times.items() if not t or t[-1] <= now - window]:
            del self._times[key]
        if len(self._times) > self.max_keys:
            by_last = sorted(self._times, key=lambda k: self._times[k][-1])
            for key in by_last[: len(self._times) - self.max_keys]:
                del self._times[key]

    async def close(self) -> None:
        self._times.clear()


# KEYS[1]: the key's sorted set of request times (microseconds). ARGV: limit, window in microseconds.
# Returns {allowed 0|1, remaining, microseconds until one more may go}.
SLIDING_LOG = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local wait = window
  if oldest[2] then wait = tonumber(oldest[2]) + window - now end
  return {0, 0, wait}
end
redis.call('ZADD', KEYS[1], now, now .. '-' .. count)
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, limit - count - 1, tonumber(first[2]) + window - now}
"""


class RedisCounters:
    """The counts in Redis (``CAMPUS_MCP_REDIS_URL``), shared by every worker and machine."""

    PREFIX = "campus-mcp:limit:"

    def __init__(self, url: str, *, fail_closed: bool = False) -> None:

        self.url = url
        self.fail_closed = fail_closed
        self._client: Any = redis_client(url, timeout_seconds=REDIS_TIMEOUT_SECONDS)
        self._script: Any = self._client.register_script(SLIDING_LOG)
        self._warned_at: float | None = None

    async def hit(self, key: str, limit: int, window: float) -> Verdict:
        from redis.exceptions import RedisError

        try:
            allowed, remaining, wait_us = await self._script(
                keys=[self.PREFIX + key], args=[limit, int(window * 1_000_000)]
            )
        except (RedisError, OSError, TimeoutError) as exc:
            return self._unreachable(exc, limit)
        return Verdict(bool(allowed), int(remaining), max(0.0, int(wait_us) / 1_000_000))

    def _unreachable(self, exc: BaseException, limit: int) -> Verdict:
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARNING_INTERVAL_SECONDS:
            self._warned_at = now
            # The error's class only: its text can hold the URL, and the URL a password.
            log.warning(
                "rate limits: Redis is unreachable (%s); requests are %s until it answers "
                "(this warning repeats at most once a minute)",
                type(exc).__name__,
                "refused" if self.fail_closed else "let through uncounted",
            )
        if self.fail_closed:
            return Verdict(False, 0, FAIL_CLOSED_RETRY_SECONDS, unavailable=True)
        return Verdict(True, limit, 0.0)

    async def close(self) -> None:
        await self._client.aclose()
