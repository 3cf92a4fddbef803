"""Work of one kind running at once, per caller: a plugin's budget for calls that are expensive
while they run (a GraphQL query at its cost limit), where a count per minute would let ten of
them start together.

The caller is the one the named limits count (``check_rate_limit``): the signed-in student, else
the address (``client_address``, trusted proxies honoured; an IPv6 /64 as one). A call over the
budget is refused at once with :class:`~campus_mcp.RateLimited` (a route answers 429 with
``Retry-After``, a tool a tool error in words), never queued: a queue would hold the caller's
connections open and still do all the work.

Counted in this process only: with several workers each keeps its own count, so one address may
run up to the budget in each worker. Calls that did not come in over HTTP (the test kit's
in-process calls), calls with the limits off (``CAMPUS_MCP_RATE_LIMITS=false``) and calls from a
platform's address range (left to the platform backstop, as for every per-address limit) are not
counted.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from campus_mcp.base.addresses import address_key
from campus_mcp.limits import ADDRESS_WHOSE, USER_WHOSE, Refusal, current_caller, refused
from campus_mcp.limits.counters import Verdict
from campus_mcp.limits.policy import RateLimit
from campus_mcp.plugin.principal import current_principal

# Work at once has no window to wait out: a running query ends within seconds.
RETRY_AFTER_S = 1.0


@dataclasses.dataclass(frozen=True)
class _AtOnce(RateLimit):
    def describe(self) -> str:
        return f"at most {self.count} at once"


@dataclasses.dataclass(frozen=True)
class _AtOnceRefusal(Refusal):
    def headers(self) -> list[tuple[str, str]]:
        # Only Retry-After: the quota fields describe counts per window, which this is not.
        return [("Retry-After", str(self.retry_after))]


def _caller_key() -> tuple[str, str] | None:
    """Whom the current call counts against, as the named limits count it, and the words for it."""
    caller = current_caller.get()
    if caller is None:
        return None
    principal = current_principal.get()
    student = principal.user_id if not principal.is_anonymous else caller.student
    if student is not None:
        return f"user:{student}", USER_WHOSE
    if caller.platform is not None:
        return None
    return f"address:{address_key(caller.host)}", ADDRESS_WHOSE


class InFlight:
    """At most a number of calls of one kind running at once per caller, in this process.

    ``async with budget.hold(count):`` around the expensive part; over the budget it raises
    :class:`~campus_mcp.RateLimited` before anything runs. ``what`` names the calls in the
    refusal ("GraphQL queries running"), ``advice`` says what to do besides waiting.
    """

    def __init__(self, name: str, *, what: str, advice: str = "") -> None:
        self.name = name
        self.what = what
        self.advice = advice
        self._running: Counter[str] = Counter()

    def running(self) -> int:
        """Calls holding the budget now, every caller together (for tests and metrics)."""
        return sum(self._running.values())

    @asynccontextmanager
    async def hold(self, count: int) -> AsyncIterator[None]:
        found = _caller_key()
        if found is None:
            yield
            return
        key, whose = found
        if self._running[key] >= count:
            limit = _AtOnce(self.name, count, window=RETRY_AFTER_S, what=self.what, whose=whose, advice=self.advice)
            refusal = _AtOnceRefusal(limit, Verdict(allowed=False, remaining=0, reset=RETRY_AFTER_S), whose)
            caller = current_caller.get()
            if caller is not None:
                caller.refusal = refusal  # the 429 gets its Retry-After from here
            raise refused(refusal)
        # Checked and taken with no await between: the loop cannot let a second call in between.
        self._running[key] += 1
        try:
            yield
        finally:
            self._running[key] -= 1
            if self._running[key] <= 0:
                del self._running[key]
