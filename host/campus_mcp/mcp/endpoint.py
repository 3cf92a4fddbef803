"""``POST /api/mcp``: the SDK's stateless Streamable HTTP handler behind our bearer check.

The bearer token resolves to a :class:`Principal` before the SDK sees the request, and the
principal is put in a context variable for the handlers. No token: the anonymous toolset when
the deployment allows it, else 401 with ``WWW-Authenticate`` naming the resource metadata and
every scope, which is how a client discovers the sign-in (seed 000 "How the sign-in works").

The endpoints (issue 14.1), each its own :class:`CampusServer` with its own instructions and
``server/discover``, behind this one bearer check:

- ``/api/mcp``: every enabled tool;
- ``/api/mcp/toolboxes``: the same tools in toolbox mode (seed 004, campus_mcp.mcp.toolboxes);
- ``/api/mcp/{plugin}``: one family with tools, with the families it depends on, whose tools its
  own send the model to (``/api/mcp/catalog`` is the catalog alone; ``/api/mcp/friends`` brings the
  schedule and the catalog), so a deployment can hand a client only that family. Any other path one
  segment under ``/api/mcp`` is a 404 naming the endpoints.

They are one OAuth protected resource, ``/api/mcp``: the protected-resource metadata names it for
all of them, the 401 challenge of every endpoint points to that one metadata document, and a token
issued for ``/api/mcp`` works on each. A sub-path is inside the resource (RFC 8707 resource
indicators are URLs, and MCP clients accept a metadata ``resource`` that is a parent of the URL
they connect to), so a client that signs in at ``/api/mcp/catalog`` asks for a token for
``/api/mcp``, and a student consents once, not once per endpoint. What an endpoint may do is still
the token's scopes: a family endpoint narrows the tools, never the permissions.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from litestar import MediaType, Response, route
from litestar.handlers import asgi
from litestar.params import FromPath
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.access import challenged_scopes, step_up_scope
from campus_mcp.assembly.change_bus import RedisSubscriptionBus, change_bus
from campus_mcp.assembly.registry import PluginError, Registry
from campus_mcp.base.asgi_body import BodyTooLarge, buffered, declared_length
from campus_mcp.base.db import DATABASE_UNREACHABLE_TEXT, database_unreachable
from campus_mcp.base.dns_rebinding import allowed_hosts, allowed_origins
from campus_mcp.base.mcp_paths import MCP_PATH, PRM_PATH, TOOLBOXES_PATH
from campus_mcp.base.speedups import Switches
from campus_mcp.mcp.fast_call import FastReads
from campus_mcp.mcp.server import CampusServer
from campus_mcp.plugin.contributions import Tool
from campus_mcp.plugin.principal import ANONYMOUS, Principal, current_principal

NO_PARITY = {"exclude_from_parity": True}

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
log = logging.getLogger(__name__)

INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
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


def sdk_user(principal: Principal, issuer: str) -> AuthenticatedUser | None:
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


def _authorization(scope: Scope) -> str:
    """The request's Authorization header ("" without one): the last one given, as a dict of the
    headers kept it; read without decoding every header of every request."""
    found = ""
    for key, value in scope["headers"]:
        if key.lower() == b"authorization":
            found = value.decode("latin-1")
    return found


class BadToolName(Exception):
    """A tools/call whose ``params.name`` is not a string (a list or an object would not even hash)."""

    def __init__(self, request_id: Any) -> None:
        super().__init__("params.name is not a string")
        self.request_id = request_id if isinstance(request_id, (str, int)) else None


def transport_security(registry: Registry) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding guard, with the names campus_mcp.base.dns_rebinding allows (as /metrics)."""
    settings = registry.settings
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts(settings),
        allowed_origins=allowed_origins(settings),
    )


def serves_endpoint(registry: Registry, family: str) -> bool:
    """Whether ``family`` has an endpoint of its own: it contributes a tool or a prompt.

    A family of prompts (``prompts``) gets one: its endpoint brings the families it depends on,
    whose tools its prompts name. A family of views only (``apps``) gets none: a view draws
    another family's tool result, and is served with that family's endpoint.
    """
    return any(t.plugin == family for t in registry.tools.values()) or any(
        p.plugin == family for p in registry.prompts.values()
    )


def endpoint_servers(registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> dict[str, CampusServer]:
    """The MCP server of each endpoint, by path: the flat one, toolbox mode, one per family with
    tools or prompts (:func:`serves_endpoint`)."""
    servers = {
        MCP_PATH: CampusServer(registry, sessions),
        TOOLBOXES_PATH: CampusServer(registry, sessions, toolboxes=True),
    }
    for name in registry.plugins:
        if not serves_endpoint(registry, name):
            continue
        path = f"{MCP_PATH}/{name}"
        if path in servers:
            raise PluginError(
                f"plugin {name!r} cannot have the endpoint {path}: it is the toolbox endpoint's. Rename the plugin."
            )
        servers[path] = CampusServer(registry, sessions, family=name)
    return servers


class McpEndpoint:
    """The ASGI app behind ``/api/mcp`` and the endpoints under it (one manager per endpoint)."""

    def __init__(
        self,
        registry: Registry,
        sessions: async_sessionmaker[AsyncSession],
        resolve_token: TokenResolver | None = None,
        step_up: StepUpPolicy | None = None,
    ) -> None:
        self.registry = registry
        self.servers = endpoint_servers(registry, sessions)
        self.security = security = transport_security(registry)
        self.managers = self._new_managers()
        # The short way for one read-only tools/call (campus_mcp.mcp.fast_call); off: every request to the SDK.
        self.fast_reads = Switches.of(registry.settings).fast_reads
        self.fast = {path: FastReads(server, security) for path, server in self.servers.items()}
        self.resolve_token: TokenResolver = resolve_token or _no_tokens
        # For a refused token: the other MCP URL it was issued for, if that is why (set by create_app).
        self.other_resource: Callable[[str], Awaitable[str | None]] | None = None
        self.step_up = step_up
        # Rate limits (campus_mcp.limits), set by create_app: counts a request against its student.
        self.admit: Admission | None = None

    @property
    def flat(self) -> CampusServer:
        """The server of ``/api/mcp`` (every tool): the deployment's ``mcp``."""
        return self.servers[MCP_PATH]

    @property
    def manager(self) -> StreamableHTTPSessionManager:
        return self.managers[MCP_PATH]

    def _new_managers(self) -> dict[str, StreamableHTTPSessionManager]:
        return {
            path: StreamableHTTPSessionManager(
                app=server.server, stateless=True, json_response=True, security_settings=self.security
            )
            for path, server in self.servers.items()
        }

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Run every endpoint's session manager (the app's lifespan).

        An SDK session manager runs once, but an app's lifespan may start again (a test serving the
        shared demo campus after another test did): each run gets new managers."""
        self.managers = self._new_managers()
        async with contextlib.AsyncExitStack() as stack:
            for manager in self.managers.values():
                await stack.enter_async_context(manager.run())
            bus = change_bus(self.registry.settings)
            if isinstance(bus, RedisSubscriptionBus) and any(server.resources for server in self.servers.values()):
                # Changes published by any process (a worker's seat refresh) reach this one's listeners.
                await stack.enter_async_context(bus.relay())
            yield

    def not_found(self, path: str) -> dict[str, Any]:
        """The 404 body of a path under ``/api/mcp`` that is no endpoint: the endpoints there are."""
        base = self.registry.settings.base_url
        listed = ", ".join(self.servers)
        return {
            "error": "not_found",
            "error_description": (
                f"There is no MCP endpoint at {path}. This server's MCP endpoints are: {listed} "
                f"({MCP_PATH} has every tool, {TOOLBOXES_PATH} the same in toolboxes, the others one family "
                "each); a family that is not enabled has none, nor one of views only (apps: its views come "
                "with the tools they draw). Connect to one of them."
            ),
            "endpoints": [f"{base}{p}" for p in self.servers],
        }

    def _tool_of_call(self, server: CampusServer, name: str, params: Mapping[str, Any]) -> Tool | None:
        if server.toolboxes is not None:
            # A proxied call needs the scope of the tool it runs, as a direct call of that tool would.
            return server.toolboxes.proxied_tool(name, params.get("arguments"))
        return server.tools.get(name)

    async def _step_up_scope(self, server: CampusServer, principal: Principal, body: bytes) -> str | None:
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
        tool = self._tool_of_call(server, name, params)
        return None if tool is None else step_up_scope(self.registry, principal, tool)

    def www_authenticate(self, error: str | None = None, description: str | None = None) -> str:
        settings = self.registry.settings
        scopes = " ".join(challenged_scopes(self.registry))
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

    async def _refusal(self, token: str) -> str:
        """Why a bearer token was refused. A token issued for another URL of this server (another
        port, before CAMPUS_MCP_PUBLIC_URL was set) says both URLs, never the token itself."""
        issued_for = await self.other_resource(token) if self.other_resource is not None and token else None
        if issued_for is None:
            return "The access token is invalid, expired or revoked. Sign in again."
        here = self.registry.settings.mcp_url
        return (
            f"The access token was issued for {issued_for}, and this endpoint is {here}. Sign in again "
            f"here, or make a token for this endpoint (campus-mcp token --url {here})."
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].rstrip("/") or "/"
        server, manager = self.servers.get(path), self.managers.get(path)
        if server is None or manager is None:
            await self._reply(send, 404, self.not_found(path), [])
            return
        if scope.get("method") != "POST":
            # A stateless server has no stream to offer on GET; DELETE has no session to end.
            await self._reply(
                send,
                405,
                {"error": "method_not_allowed", "error_description": "Send MCP requests as POST."},
                [(b"allow", b"POST")],
            )
            return
        authorization = _authorization(scope)
        principal: Principal
        if authorization:
            scheme, _, token = authorization.partition(" ")
            resolved = await self.resolve_token(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
            if resolved is None:
                await self._reply(
                    send,
                    401,
                    {"error": "invalid_token", "error_description": await self._refusal(token.strip())},
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
        body: bytes | None = None
        if self.step_up is not None and not principal.is_anonymous:
            # Seed 000: only clients known to sign in again and retry get the 403 step-up; the
            # others get the permission tool error, which a student can read. The policy (which
            # may read the client from the database) is asked only for a call that lacks a scope.
            limit = manager.max_request_body_size
            try:
                body, receive = await buffered(scope, receive, limit)
                wanted = await self._step_up_scope(server, principal, body)
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
        if self.fast_reads and body is None and declared_length(scope) <= manager.max_request_body_size:
            # Only a body whose length is declared and allowed: the SDK words every other refusal.
            try:
                body, receive = await buffered(scope, receive, manager.max_request_body_size)
            except BodyTooLarge:
                await self._reply(send, 413, _rpc_error(INVALID_REQUEST, _too_large(manager.max_request_body_size)), [])
                return
        reset = current_principal.set(principal)
        # The SDK's view of the same caller (get_access_token()): the requestState boundary binds
        # sealed state to it, so one student's confirmation cannot be replayed by another.
        # (Anonymous: no SDK user, and no issuer URL to format per request.)
        user = None if principal.is_anonymous else sdk_user(principal, self.registry.settings.base_url)
        sdk_reset = auth_context_var.set(user)
        try:
            fast = self.fast[path]
            if not (
                self.fast_reads and body is not None and await fast.serve(scope, receive, send, body, principal)  # type: ignore[arg-type]
            ):
                await manager.handle_request(scope, receive, send)  # type: ignore[arg-type]
        finally:
            auth_context_var.reset(sdk_reset)
            current_principal.reset(reset)


def mcp_route_handlers(endpoint: McpEndpoint) -> list[Any]:
    """The app's routes to the endpoints: one ASGI handler for the endpoints' paths, and for any
    other path one segment under ``/api/mcp`` (a family not enabled, a typo) the 404 naming them."""

    @asgi(path=list(endpoint.servers), copy_scope=True, opt=NO_PARITY)
    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        answered = False

        async def sending(message: Any) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            await send(message)

        try:
            await endpoint(scope, receive, sending)
        except Exception as exc:
            if answered or not database_unreachable(exc):
                raise
            # Before a tool runs (the token's check, the step-up policy): a JSON-RPC error the MCP
            # client shows with its sentence, at 503 so a proxy or a retry sees the outage too.
            # A tool's own call during an outage is a tool error (mcp_server.py).
            log.warning("%s: the database cannot be reached (%s)", scope["path"], type(exc).__name__)
            await endpoint._reply(
                send, 503, _rpc_error(INTERNAL_ERROR, DATABASE_UNREACHABLE_TEXT), [(b"retry-after", b"30")]
            )

    @route(
        MCP_PATH + "/{name:str}",
        http_method=["GET", "POST", "PUT", "PATCH", "DELETE"],
        opt=NO_PARITY,
        include_in_schema=False,
        media_type=MediaType.JSON,
    )
    async def no_such_endpoint(name: FromPath[str]) -> Response[dict[str, Any]]:
        return Response(endpoint.not_found(f"{MCP_PATH}/{name}"), status_code=404, media_type=MediaType.JSON)

    return [mcp_endpoint, no_such_endpoint]
