"""Rate limits (seed 000 "Rate limits"): whom each request counts against, and the refusals.

- A request of a signed-in student counts against the student (``api/user``, 100 a minute): a
  token on ``/api/mcp`` (counted by the endpoint once the token is resolved, :meth:`RequestLimits.admit_mcp`)
  and a dashboard session on the student REST routes share one budget.
- A request without either counts against its address (``api/address``), and registration,
  token and revocation have their own per-address limits on top; the sign-in form keeps its
  own failed-attempt limit (``oauth/login_limit.py``).
- An address in a platform range (claude.ai, ChatGPT: one address for many students) skips the
  per-address limits and gets one high backstop per range instead (``mcp/platform``).
- A plugin declares a named limit (:class:`RateLimit`) and checks it with :func:`check_rate_limit`,
  e.g. the catalog's ``catalog/semantic`` for each search by meaning.

A refused HTTP request gets 429 with ``Retry-After`` and the ``RateLimit-Policy``/``RateLimit``
fields; a refused tool call gets a tool error that says when to retry (outcome ``rate_limited``).
Only requests that came in over HTTP are counted: an in-process call (the test kit) has no
address and is not.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from campus_mcp.errors import CampusError
from campus_mcp.limits.counters import Counters, ProcessCounters, RedisCounters, Verdict
from campus_mcp.limits.policy import (
    ADDRESS,
    PLATFORM,
    REGISTER,
    REVOKE,
    TOKEN,
    USER,
    Network,
    Policy,
    RateLimit,
    address_key,
    client_host,
    within,
)
from campus_mcp.principal import Principal, current_principal
from campus_mcp.settings import Settings

# Paths whose requests are counted: the API (MCP included) and the discovery documents.
LIMITED_PREFIXES = ("/api/", "/.well-known/")
MCP_PATH = "/api/mcp"
# Per-address limits of their own, on top of api/address (POST only).
OAUTH_LIMITS = {"/api/oauth/register": REGISTER, "/api/oauth/token": TOKEN, "/api/oauth/revoke": REVOKE}
# Enough of a refused MCP request's body to see whether it is a tools/call.
PEEK_BYTES = 64 * 1024


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A request over a limit: which limit, whose count, and when to come back."""

    limit: RateLimit
    verdict: Verdict
    whose: str

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.verdict.reset))

    @property
    def message(self) -> str:
        return (
            f"Too many {self.limit.what} {self.whose}: {self.limit.describe()}. Retry after {self.retry_after} seconds."
        )

    @property
    def tool_message(self) -> str:
        return (
            f"Rate limited: too many {self.limit.what} {self.whose} ({self.limit.describe()}). "
            f"Retry after {self.retry_after} seconds; until then answer without this tool, "
            "or tell the student to try again in a moment."
        )

    def headers(self) -> list[tuple[str, str]]:
        # The fields of draft-ietf-httpapi-ratelimit-headers-10 (sections 3 and 4): a quota policy
        # named by a string with q (quota units) and w (window seconds), and the current state of
        # that policy with r (remaining units) and t (seconds until the quota has room again).
        name = self.limit.name.replace("\\", "").replace('"', "")
        return [
            ("Retry-After", str(self.retry_after)),
            ("RateLimit-Policy", f'"{name}";q={self.limit.count};w={math.ceil(self.limit.window)}'),
            ("RateLimit", f'"{name}";r={self.verdict.remaining};t={self.retry_after}'),
        ]


class RateLimited(CampusError):
    """A check of a named limit refused the call: a route answers 429, a tool a tool error."""

    status = 429

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@dataclasses.dataclass
class Caller:
    """Who sent the request being answered, for the limits checked while it runs; ``refusal``
    is a plugin's check that refused it (its 429 then gets the headers)."""

    limits: RequestLimits
    host: str
    platform: Network | None
    student: int | None
    refusal: Refusal | None = None


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("campus_limits_caller", default=None)
# A tools/call over the student's limit: let through to the MCP server, which answers the tool error.
_refused_call: contextvars.ContextVar[Refusal | None] = contextvars.ContextVar(
    "campus_limits_refused_call", default=None
)

USER_WHOSE = USER.whose
ADDRESS_WHOSE = ADDRESS.whose


def refused_call() -> Refusal | None:
    """The refusal of the tools/call being answered, if the student is over the limit."""
    return _refused_call.get()


async def check_rate_limit(limit: RateLimit) -> None:
    """Count one use of a plugin's named limit for the current caller; raise :class:`RateLimited`
    when it is used up. It counts against the signed-in student (a token or a dashboard session),
    else against the address; an address in a platform range is left to the platform backstop.
    A call that did not come in over HTTP (the test kit's in-process calls) is not counted."""
    caller = _caller.get()
    if caller is None:
        return
    principal = current_principal.get()
    student = principal.user_id if not principal.is_anonymous and principal.user_id is not None else caller.student
    configured = caller.limits.policy.limit(limit)
    if student is not None:
        refusal = await caller.limits.charge(configured, f"user:{student}", USER_WHOSE)
    elif caller.platform is not None:
        return
    else:
        refusal = await caller.limits.charge(configured, f"address:{address_key(caller.host)}", ADDRESS_WHOSE)
    if refusal is not None:
        caller.refusal = refusal
        raise RateLimited(refusal)


def is_mcp_path(path: str) -> bool:
    """``/api/mcp`` and every endpoint under it (toolboxes, one per plugin)."""
    return path == MCP_PATH or path.startswith(MCP_PATH + "/")


def _header(scope: Scope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope["headers"] if key.lower() == name]


class RequestLimits:
    """The limits of one deployment: its policy, its counters, its platform ranges."""

    def __init__(self, settings: Settings, counters: Counters | None = None) -> None:
        from campus_mcp.limits.platforms import PlatformRanges

        self.settings = settings
        self.policy = Policy.of(settings)
        self.counters: Counters = counters or (
            RedisCounters(settings.redis_url.get_secret_value(), fail_closed=settings.redis_fail_closed)
            if settings.redis_url.get_secret_value()
            else ProcessCounters()
        )
        self.platforms = PlatformRanges(settings, self.policy.static_platforms)

    def _limit(self, limit: RateLimit) -> RateLimit:
        return self.policy.limits.get(limit.name, limit)

    async def charge(self, limit: RateLimit, key: str, whose: str) -> Refusal | None:
        verdict = await self.counters.hit(f"{limit.name}:{key}", limit.count, limit.window)
        return None if verdict.allowed else Refusal(limit, verdict, whose)

    async def caller(self, scope: Scope) -> Caller:
        client = scope.get("client")
        peer = str(client[0]) if client else "unknown"
        host = client_host(peer, _header(scope, b"x-forwarded-for"), self.policy.trusted_proxies)
        principal = scope.get("campus_principal")
        student = principal.user_id if isinstance(principal, Principal) and not principal.is_anonymous else None
        platform = within(host, await self.platforms.current())
        return Caller(limits=self, host=host, platform=platform, student=student)

    def charges(self, scope: Scope, caller: Caller) -> list[tuple[RateLimit, str, str]]:
        """The limits one HTTP request counts against (before any handler runs)."""
        path = scope["path"]
        if is_mcp_path(path) and _header(scope, b"authorization"):
            return []  # the endpoint counts it against the token's student once the token is resolved
        if caller.student is not None:
            return [(self._limit(USER), f"user:{caller.student}", USER_WHOSE)]
        if caller.platform is not None:
            backstop = self._limit(PLATFORM)
            return [(backstop, f"range:{caller.platform}", backstop.whose)]
        key = f"address:{address_key(caller.host)}"
        found = [(self._limit(ADDRESS), key, ADDRESS_WHOSE)]
        specific = OAUTH_LIMITS.get(path.rstrip("/"))
        if specific is not None and scope.get("method") == "POST":
            found.append((self._limit(specific), key, ADDRESS_WHOSE))
        return found

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware (after the sign-in one): count the request, or answer 429."""

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or not scope["path"].startswith(LIMITED_PREFIXES):
                await app(scope, receive, send)
                return
            caller = await self.caller(scope)
            _caller.set(caller)
            for limit, key, whose in self.charges(scope, caller):
                refusal = await self.charge(limit, key, whose)
                if refusal is not None:
                    await send_refusal(send, scope["path"], refusal)
                    return

            async def send_with_fields(message: Message) -> None:
                # A plugin's check refused (RateLimited, answered 429 by the error handler): add its fields.
                if message["type"] == "http.response.start" and message["status"] == 429 and caller.refusal:
                    extra = [(k.lower().encode(), v.encode()) for k, v in caller.refusal.headers()]
                    message = {**message, "headers": [*message.get("headers", []), *extra]}
                await send(message)

            await app(scope, receive, send_with_fields)

        return limited

    async def admit_mcp(
        self, scope: Scope, receive: Receive, principal: Principal
    ) -> tuple[Receive, tuple[int, dict[str, Any], list[tuple[bytes, bytes]]] | None]:
        """Count an ``/api/mcp`` request with a token against its student. Over the limit, a
        tools/call goes on (the MCP server answers it with a tool error the model can act on);
        anything else gets the 429 to send."""
        if principal.is_anonymous or principal.user_id is None:
            return receive, None
        refusal = await self.charge(self._limit(USER), f"user:{principal.user_id}", USER_WHOSE)
        if refusal is None:
            return receive, None
        from campus_mcp.endpoint import BodyTooLarge, _buffered

        try:
            body, receive = await _buffered(scope, receive, PEEK_BYTES)
            message = json.loads(body)
        except (BodyTooLarge, ValueError):
            message = None
        if isinstance(message, dict) and message.get("method") == "tools/call":
            _refused_call.set(refusal)
            return receive, None
        headers = [(k.lower().encode(), v.encode()) for k, v in refusal.headers()]
        return receive, (429, refusal_body(scope["path"], refusal), headers)

    async def close(self) -> None:
        await self.counters.close()


def refusal_body(path: str, refusal: Refusal) -> dict[str, str]:
    """The body of a 429: the OAuth endpoints and ``/api/mcp`` answer errors as error and
    error_description (RFC 6749 5.2, the existing registration refusal); the REST routes as
    error and message, like every other refusal of theirs."""
    if path.startswith("/api/oauth"):
        return {"error": "temporarily_unavailable", "error_description": refusal.message}
    if is_mcp_path(path):
        return {"error": "rate_limited", "error_description": refusal.message}
    return {"error": "RateLimited", "message": refusal.message}


async def send_refusal(send: Send, path: str, refusal: Refusal) -> None:
    payload = json.dumps(refusal_body(path, refusal)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in refusal.headers()]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": payload, "more_body": False})


def limits_middleware(limits: RequestLimits | None) -> list[Callable[[ASGIApp], ASGIApp]]:
    """The app's middleware entry for the limits: none when they are off."""
    return [] if limits is None else [limits.middleware]


def request_limits(settings: Settings) -> RequestLimits | None:
    """The deployment's limits, or None with ``CAMPUS_MCP_RATE_LIMITS=false``."""
    return RequestLimits(settings) if settings.rate_limits else None


__all__ = [
    "RateLimit",
    "RateLimited",
    "Refusal",
    "RequestLimits",
    "check_rate_limit",
    "limits_middleware",
    "refused_call",
    "request_limits",
]
