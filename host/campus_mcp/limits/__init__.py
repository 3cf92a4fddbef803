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

- A bearer token that does not resolve (unknown, expired, revoked, malformed) counts against the
  address on ``api/bad-token`` before its 401 goes out (:meth:`RequestLimits.bad_token_middleware`):
  a counter of its own, so guesses from a shared NAT address do not lock out the students there
  whose tokens are good. A good token is never refused for the address's failures, so a right guess
  would go through: what makes guessing hopeless is the tokens' 256 random bits; this limit bounds
  the flood of checks and 401s one address can cause.

A refused HTTP request gets 429 with ``Retry-After`` and the ``RateLimit-Policy``/``RateLimit``
fields; a refused tool call gets a tool error that says when to retry (outcome ``rate_limited``),
on a token or without one. An answer let through carries the fields too (draft-ietf-httpapi-
ratelimit-headers-10 recommends them on every answer of a limited resource): the counts this
request made, no extra round trip. With Redis unreachable and ``CAMPUS_MCP_REDIS_FAIL_CLOSED``, a
request is refused with 503 and ``Retry-After`` (the server's trouble, which a client retries; a
429 would tell the student they used up a quota they did not), a tool call with a tool error.
Only requests that came in over HTTP are counted: an in-process call (the test kit) has no
address and is not.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from campus_mcp.base.addresses import Network, address_key, client_address, within
from campus_mcp.base.asgi_body import BodyTooLarge, buffered
from campus_mcp.base.mcp_paths import MCP_PATH
from campus_mcp.base.settings import Settings
from campus_mcp.limits.counters import Counters, ProcessCounters, RedisCounters, Verdict
from campus_mcp.limits.platforms import PlatformRanges
from campus_mcp.limits.policy import (
    ADDRESS,
    BAD_TOKEN,
    PLATFORM,
    REGISTER,
    REVOKE,
    TOKEN,
    USER,
    Policy,
    RateLimit,
)
from campus_mcp.plugin.errors import CampusError
from campus_mcp.plugin.principal import Principal, current_principal

# Paths whose requests are counted: the API (MCP included) and the discovery documents.
LIMITED_PREFIXES = ("/api/", "/.well-known/")
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
    def unavailable(self) -> bool:
        """Refused because the counters cannot be reached (fail closed), not for the count."""
        return self.verdict.unavailable

    @property
    def status(self) -> int:
        # Fail closed: 503, the server's temporary trouble, which clients and proxies retry after
        # Retry-After; a 429 would blame the caller's count, which nobody could read.
        return 503 if self.unavailable else 429

    @property
    def message(self) -> str:
        if self.unavailable:
            return (
                "This server cannot check its rate limits right now, so it refuses requests until it can. "
                f"Retry after {self.retry_after} seconds."
            )
        text = (
            f"Too many {self.limit.what} {self.whose}: {self.limit.describe()}. Retry after {self.retry_after} seconds."
        )
        return f"{text} {self.limit.advice}" if self.limit.advice else text

    @property
    def tool_message(self) -> str:
        if self.unavailable:
            return (
                "Temporarily unavailable: this server cannot check its rate limits right now, so it refuses "
                f"calls until it can (not because of anything the student did). Retry after {self.retry_after} "
                "seconds; until then answer without this tool, or tell the student to try again in a moment."
            )
        return (
            f"Rate limited: too many {self.limit.what} {self.whose} ({self.limit.describe()}). "
            f"Retry after {self.retry_after} seconds; until then answer without this tool, "
            "or tell the student to try again in a moment."
        )

    def headers(self) -> list[tuple[str, str]]:
        retry = [("Retry-After", str(self.retry_after))]
        # Fail closed: no count is known, so no quota fields.
        return retry if self.unavailable else retry + quota_fields([(self.limit, self.verdict)])


def _field_name(limit: RateLimit) -> str:
    return limit.name.replace("\\", "").replace('"', "")


def quota_fields(counted: list[tuple[RateLimit, Verdict]]) -> list[tuple[str, str]]:
    """The fields of draft-ietf-httpapi-ratelimit-headers-10 (sections 3 and 4) for the limits a
    request was counted against: each quota policy named by a string with q (quota units) and w
    (window seconds), and its current state with r (remaining units) and t (seconds until the
    quota has room again); several limits are a list in each field."""
    known = [(limit, verdict) for limit, verdict in counted if not verdict.unavailable]
    if not known:
        return []
    policies = [f'"{_field_name(limit)}";q={limit.count};w={math.ceil(limit.window)}' for limit, _ in known]
    states = []
    for limit, verdict in known:
        wait = max(1, math.ceil(verdict.reset)) if not verdict.allowed else max(0, math.ceil(verdict.reset))
        states.append(f'"{_field_name(limit)}";r={verdict.remaining};t={wait}')
    return [("RateLimit-Policy", ", ".join(policies)), ("RateLimit", ", ".join(states))]


def _encoded(fields: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in fields]


class RateLimited(CampusError):
    """A check of a named limit refused the call: a route answers 429, a tool a tool error."""

    status = 429

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class LimitsUnavailable(RateLimited):
    """The counters cannot be reached and the limits fail closed: a route answers 503."""

    status = 503


def refused(refusal: Refusal) -> RateLimited:
    return LimitsUnavailable(refusal) if refusal.unavailable else RateLimited(refusal)


@dataclasses.dataclass
class Caller:
    """Who sent the request being answered, for the limits checked while it runs; ``refusal``
    is a plugin's check that refused it (its 429 then gets the headers)."""

    limits: RequestLimits
    host: str
    platform: Network | None
    student: int | None
    refusal: Refusal | None = None
    # Every limit this request was counted against, with its verdict: the answer's fields.
    counted: list[tuple[RateLimit, Verdict]] = dataclasses.field(default_factory=list)


current_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("campus_limits_caller", default=None)
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
    caller = current_caller.get()
    if caller is None:
        return
    principal = current_principal.get()
    student = principal.user_id if not principal.is_anonymous and principal.user_id is not None else caller.student
    configured = caller.limits.policy.limit(limit)
    if student is not None:
        refusal = await caller.limits.charge(configured, f"user:{student}", USER_WHOSE, caller)
    elif caller.platform is not None:
        return
    else:
        refusal = await caller.limits.charge(configured, f"address:{address_key(caller.host)}", ADDRESS_WHOSE, caller)
    if refusal is not None:
        caller.refusal = refusal
        raise refused(refusal)


def is_mcp_path(path: str) -> bool:
    """``/api/mcp`` and every endpoint under it (toolboxes, one per plugin)."""
    return path == MCP_PATH or path.startswith(MCP_PATH + "/")


def _header(scope: Scope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope["headers"] if key.lower() == name]


class RequestLimits:
    """The limits of one deployment: its policy, its counters, its platform ranges."""

    def __init__(self, settings: Settings, counters: Counters | None = None) -> None:

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

    async def charge(self, limit: RateLimit, key: str, whose: str, caller: Caller | None = None) -> Refusal | None:
        """Count one request; the refusal when it is over. ``caller`` keeps the verdict for the answer's fields."""
        verdict = await self.counters.hit(f"{limit.name}:{key}", limit.count, limit.window)
        if caller is not None:
            caller.counted.append((limit, verdict))
        return None if verdict.allowed else Refusal(limit, verdict, whose)

    async def caller(self, scope: Scope) -> Caller:
        host = client_address(scope, self.policy.trusted_proxies)
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
        """ASGI middleware (after the sign-in one): count the request, or answer the refusal (429; 503 failing closed)."""

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or not scope["path"].startswith(LIMITED_PREFIXES):
                await app(scope, receive, send)
                return
            caller = await self.caller(scope)
            current_caller.set(caller)
            for limit, key, whose in self.charges(scope, caller):
                refusal = await self.charge(limit, key, whose, caller)
                if refusal is not None:
                    if is_mcp_path(scope["path"]):
                        # A tools/call goes on to the MCP server, which answers the tool error.
                        receive, goes_on = await _as_tool_error(scope, receive, refusal)
                        if goes_on:
                            break
                    await send_refusal(send, scope["path"], refusal)
                    return

            async def send_with_fields(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", []), *_fields_for(message, caller)]}
                await send(message)

            await app(scope, receive, send_with_fields)

        return limited

    def bad_token_middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware outside every bearer check (the MCP endpoints', the REST routes'
        personal tokens): a 401 for a token that did not resolve is counted against the address
        (``api/bad-token``; a platform range's backstop) before it goes out, and past the limit
        becomes the refusal. It watches the answer rather than each check, so every check that
        answers ``error="invalid_token"``, today's and a later one's, is counted the same way; a
        401 that asks for a token where none was sent is the start of a sign-in and is not."""

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or not scope["path"].startswith(LIMITED_PREFIXES):
                await app(scope, receive, send)
                return
            replaced = False

            async def send_counted(message: Message) -> None:
                nonlocal replaced
                if replaced:
                    return  # the rest of the 401: the refusal went out instead
                if message["type"] == "http.response.start" and _invalid_token(message):
                    caller = await self.caller(scope)
                    if caller.platform is not None:
                        limit = self._limit(PLATFORM)
                        refusal = await self.charge(limit, f"range:{caller.platform}", limit.whose, caller)
                    else:
                        key = f"address:{address_key(caller.host)}"
                        refusal = await self.charge(self._limit(BAD_TOKEN), key, ADDRESS_WHOSE, caller)
                    if refusal is not None:
                        replaced = True
                        await send_refusal(send, scope["path"], refusal)
                        return
                    message = {**message, "headers": [*message.get("headers", []), *_fields_for(message, caller)]}
                await send(message)

            await app(scope, receive, send_counted)

        return counted

    async def admit_mcp(
        self, scope: Scope, receive: Receive, principal: Principal
    ) -> tuple[Receive, tuple[int, dict[str, Any], list[tuple[bytes, bytes]]] | None]:
        """Count an ``/api/mcp`` request with a token against its student. Over the limit, a
        tools/call goes on (the MCP server answers it with a tool error the model can act on);
        anything else gets the 429 to send."""
        if principal.is_anonymous or principal.user_id is None:
            return receive, None
        refusal = await self.charge(self._limit(USER), f"user:{principal.user_id}", USER_WHOSE, current_caller.get())
        if refusal is None:
            return receive, None
        receive, goes_on = await _as_tool_error(scope, receive, refusal)
        if goes_on:
            return receive, None
        return receive, (refusal.status, refusal_body(scope["path"], refusal), _encoded(refusal.headers()))

    async def close(self) -> None:
        await self.counters.close()


async def _as_tool_error(scope: Scope, receive: Receive, refusal: Refusal) -> tuple[Receive, bool]:
    """Whether a refused ``/api/mcp`` request is a tools/call, which goes on to the MCP server to
    be answered with the tool error a model can act on; and the receive to go on with."""
    try:
        body, receive = await buffered(scope, receive, PEEK_BYTES)
        message = json.loads(body)
    except (BodyTooLarge, ValueError):
        message = None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        _refused_call.set(refusal)
        return receive, True
    return receive, False


def _has_header(message: Mapping[str, Any], name: bytes) -> bool:
    return any(key.lower() == name for key, _ in message.get("headers", []))


def _invalid_token(message: Mapping[str, Any]) -> bool:
    """A 401 of a bearer check that failed (RFC 6750's ``error="invalid_token"``)."""
    if message["status"] != 401:
        return False
    challenges = [value for key, value in message.get("headers", []) if key.lower() == b"www-authenticate"]
    return any(b'error="invalid_token"' in value for value in challenges)


def _fields_for(message: Mapping[str, Any], caller: Caller) -> list[tuple[bytes, bytes]]:
    """The limit fields an answer gets: none when it has them already (a refusal of the endpoint);
    a plugin's refusal (RateLimited, answered by the error handler) its own with Retry-After;
    else the state of every limit the request was counted against."""
    if _has_header(message, b"ratelimit-policy") or _has_header(message, b"ratelimit"):
        return []
    if message["status"] in (429, 503) and caller.refusal is not None:
        return _encoded(caller.refusal.headers())
    return _encoded(quota_fields(caller.counted))


def refusal_body(path: str, refusal: Refusal) -> dict[str, str]:
    """The body of a refusal: the OAuth endpoints and ``/api/mcp`` answer errors as error and
    error_description (RFC 6749 5.2, the existing registration refusal); the REST routes as
    error and message, like every other refusal of theirs."""
    oauth_shaped = path.startswith("/api/oauth") or is_mcp_path(path)
    if refusal.unavailable:
        if oauth_shaped:
            return {"error": "temporarily_unavailable", "error_description": refusal.message}
        return {"error": "LimitsUnavailable", "message": refusal.message}
    if path.startswith("/api/oauth"):
        return {"error": "temporarily_unavailable", "error_description": refusal.message}
    if is_mcp_path(path):
        return {"error": "rate_limited", "error_description": refusal.message}
    return {"error": "RateLimited", "message": refusal.message}


async def send_refusal(send: Send, path: str, refusal: Refusal) -> None:
    payload = json.dumps(refusal_body(path, refusal)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    headers += _encoded(refusal.headers())
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload, "more_body": False})


def limits_middleware(limits: RequestLimits | None) -> list[Callable[[ASGIApp], ASGIApp]]:
    """The app's middleware entry for the limits: none when they are off."""
    return [] if limits is None else [limits.middleware]


def bad_token_middleware(limits: RequestLimits | None) -> list[Callable[[ASGIApp], ASGIApp]]:
    """The app's middleware entry that counts failed bearer checks: before (outside) every
    middleware that checks a bearer token; none when the limits are off."""
    return [] if limits is None else [limits.bad_token_middleware]


def request_limits(settings: Settings) -> RequestLimits | None:
    """The deployment's limits, or None with ``CAMPUS_MCP_RATE_LIMITS=false``."""
    return RequestLimits(settings) if settings.rate_limits else None


__all__ = [
    "LimitsUnavailable",
    "RateLimit",
    "RateLimited",
    "Refusal",
    "RequestLimits",
    "bad_token_middleware",
    "check_rate_limit",
    "limits_middleware",
    "refused_call",
    "request_limits",
]
