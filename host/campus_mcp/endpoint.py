"""``POST /api/mcp``: the SDK's stateless Streamable HTTP handler behind our bearer check.

The bearer token resolves to a :class:`Principal` before the SDK sees the request, and the
principal is put in a context variable for the handlers. No token: the anonymous toolset when
the deployment allows it, else 401 with ``WWW-Authenticate`` naming the resource metadata and
every scope, which is how a client discovers the sign-in (seed 000 "How the sign-in works").
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from campus_mcp.access import step_up_scope
from campus_mcp.principal import ANONYMOUS, Principal, current_principal
from campus_mcp.registry import Registry

MCP_PATH = "/api/mcp"
PRM_PATH = "/.well-known/oauth-protected-resource"

# Resolves a bearer token to its principal; None when the token is unknown, expired or revoked.
TokenResolver = Callable[[str], Awaitable[Principal | None]]


# Counts a request with a token against its student: the receive to go on with, and a
# refusal (status, body, headers) to answer instead, if any (campus_mcp.limits).
Admission = Callable[
    [Scope, Receive, Principal], Awaitable[tuple[Receive, tuple[int, dict[str, Any], list[tuple[bytes, bytes]]] | None]]
]


# Whether a client gets the 403 step-up (seed 000: only clients on an allow list).
StepUpPolicy = Callable[[Principal], Awaitable[bool]]


# JSON-RPC error codes (the spec's numbers; the SDK answers the same ones).
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
BAD_TOOL_NAME = (
    "params.name must be a string: the name of one tool, exactly as tools/list gives it "
    '(for example "list_terms"). Call tools/list to see the tools.'
)


def _too_large(limit: int) -> str:
    return (
        f"The request body is larger than this server accepts ({limit} bytes, {limit // (1024 * 1024)} MiB). "
        "Send a smaller request: shorter arguments, or fewer items at once."
    )


def _rpc_error(code: int, message: str, request_id: str | int | None = None) -> dict[str, Any]:
    # No id when the body was not read (too large): JSON-RPC answers that with a null id.
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def _no_tokens(_token: str) -> Principal | None:
    return None


def _sdk_user(principal: Principal, issuer: str) -> AuthenticatedUser | None:
    if principal.is_anonymous or principal.client_id is None:
        return None
    return AuthenticatedUser(
        AccessToken(
            token="",  # the SDK never needs the token itself; it is not kept beyond the check
            client_id=principal.client_id,
            scopes=sorted(principal.scopes),
            resource=principal.audience,
            subject=str(principal.user_id),
            claims={"iss": issuer},
        )
    )


class BodyTooLarge(Exception):
    """The request body is over the SDK's limit; nothing more of it is read."""


class BadToolName(Exception):
    """A tools/call whose ``params.name`` is not a string (a list or an object would not even hash)."""

    def __init__(self, request_id: Any) -> None:
        super().__init__("params.name is not a string")
        self.request_id = request_id if isinstance(request_id, (str, int)) else None


async def _buffered(scope: Scope, receive: Receive, limit: int) -> tuple[bytes, Receive]:
    """Read the request body, at most ``limit`` bytes, and a receive that hands it out again.

    The limit is the SDK's own (``max_request_body_size``), checked the way its body-limit
    middleware checks it: a declared Content-Length over it is refused before reading, and a
    chunked body is refused as soon as it crosses it, so a client cannot make the endpoint hold
    more than the SDK would have accepted.
    """
    for key, value in scope["headers"]:
        if key.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            raise BodyTooLarge
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > limit:
            raise BodyTooLarge
        body.extend(chunk)
        if not message.get("more_body", False):
            break
    data = bytes(body)
    pending = [{"type": "http.request", "body": data, "more_body": False}]

    async def replay() -> Any:
        return pending.pop() if pending else await receive()

    return data, replay


def transport_security(registry: Registry) -> TransportSecuritySettings:
    settings = registry.settings
    hosts = [f"{settings.host}:{settings.port}", "127.0.0.1:*", "localhost:*", "[::1]:*", *settings.allowed_hosts]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *settings.allowed_origins]
    if settings.public_url:
        from urllib.parse import urlsplit

        public = urlsplit(settings.public_url)
        hosts.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


class McpEndpoint:
    """The ASGI app mounted at ``/api/mcp``."""

    def __init__(
        self,
        registry: Registry,
        manager: StreamableHTTPSessionManager,
        resolve_token: TokenResolver | None = None,
        step_up: StepUpPolicy | None = None,
    ) -> None:
        self.registry = registry
        self.manager = manager
        self.resolve_token: TokenResolver = resolve_token or _no_tokens
        self.step_up = step_up
        # Rate limits (campus_mcp.limits), set by create_app: counts a request against its student.
        self.admit: Admission | None = None

    async def _step_up_scope(self, principal: Principal, body: bytes) -> str | None:
        """For a tools/call whose tool needs a scope the token lacks: the scopes to ask for."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        if not isinstance(params, dict):
            return None  # the SDK answers a tools/call without params
        name = params.get("name")
        if not isinstance(name, str):
            raise BadToolName(message.get("id"))
        tool = self.registry.tools.get(name)
        return None if tool is None else step_up_scope(self.registry, principal, tool)

    def www_authenticate(self, error: str | None = None, description: str | None = None) -> str:
        settings = self.registry.settings
        scopes = " ".join(self.registry.scopes)
        parts = [f'resource_metadata="{settings.base_url}{PRM_PATH}{MCP_PATH}"', f'scope="{scopes}"']
        if error:
            parts.insert(0, f'error="{error}"')
        if description:
            parts.insert(1, f'error_description="{description}"')
        return "Bearer " + ", ".join(parts)

    async def _reply(self, send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
        payload = json.dumps(body).encode()
        start: HTTPResponseStartEvent = {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
        end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": payload, "more_body": False}
        await send(start)
        await send(end)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            # A stateless server has no stream to offer on GET; DELETE has no session to end.
            await self._reply(
                send,
                405,
                {"error": "method_not_allowed", "error_description": "Send MCP requests as POST."},
                [(b"allow", b"POST")],
            )
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        authorization = headers.get("authorization", "")
        principal: Principal
        if authorization:
            scheme, _, token = authorization.partition(" ")
            resolved = await self.resolve_token(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
            if resolved is None:
                await self._reply(
                    send,
                    401,
                    {
                        "error": "invalid_token",
                        "error_description": "The access token is invalid, expired or revoked. Sign in again.",
                    },
                    [
                        (
                            b"www-authenticate",
                            self.www_authenticate("invalid_token", "The access token is invalid or expired").encode(),
                        )
                    ],
                )
                return
            principal = resolved
        elif self.registry.settings.anonymous_access:
            principal = ANONYMOUS
        else:
            await self._reply(
                send,
                401,
                {"error": "invalid_token", "error_description": "Sign in: this server needs an OAuth access token."},
                [(b"www-authenticate", self.www_authenticate().encode())],
            )
            return
        if self.admit is not None:
            receive, refused = await self.admit(scope, receive, principal)
            if refused is not None:
                await self._reply(send, *refused)
                return
        if self.step_up is not None and not principal.is_anonymous:
            # Seed 000: only clients known to sign in again and retry get the 403 step-up; the
            # others get the permission tool error, which a student can read. The policy (which
            # may read the client from the database) is asked only for a call that lacks a scope.
            limit = self.manager.max_request_body_size
            try:
                body, receive = await _buffered(scope, receive, limit)
                wanted = await self._step_up_scope(principal, body)
            except BodyTooLarge:
                await self._reply(send, 413, _rpc_error(INVALID_REQUEST, _too_large(limit)), [])
                return
            except BadToolName as exc:
                await self._reply(send, 400, _rpc_error(INVALID_PARAMS, BAD_TOOL_NAME, exc.request_id), [])
                return
            if wanted is not None and await self.step_up(principal):
                settings = self.registry.settings
                challenge = (
                    f'Bearer error="insufficient_scope", scope="{wanted}", '
                    f'resource_metadata="{settings.base_url}{PRM_PATH}{MCP_PATH}", '
                    'error_description="This tool needs a permission the app was not given"'
                )
                await self._reply(
                    send,
                    403,
                    {
                        "error": "insufficient_scope",
                        "error_description": f"This tool needs a permission the app was not given: {wanted}.",
                    },
                    [(b"www-authenticate", challenge.encode())],
                )
                return
        reset = current_principal.set(principal)
        # The SDK's view of the same caller (get_access_token()): the requestState boundary binds
        # sealed state to it, so one student's confirmation cannot be replayed by another.
        sdk_reset = auth_context_var.set(_sdk_user(principal, self.registry.settings.base_url))
        try:
            await self.manager.handle_request(scope, receive, send)  # type: ignore[arg-type]
        finally:
            auth_context_var.reset(sdk_reset)
            current_principal.reset(reset)
