"""CORS for browser clients (issue 14.5): a web-based MCP inspector signs in from its own origin.

Two kinds of route answer cross-origin requests, and nothing else does:

- **Public sign-in routes**: the OAuth metadata, registration, token and revocation endpoints
  and the server cards. They use no cookie and hold nothing a page could steal, so any origin
  may read them: ``Access-Control-Allow-Origin: *``, never with credentials.
- **The MCP endpoints** (``/api/mcp`` and ``/api/mcp/...``): only for an origin the DNS-rebinding
  guard lets in (``transport_security``: loopback, the public URL, ``CAMPUS_MCP_ALLOWED_ORIGINS``),
  echoed back with ``Vary: Origin``, again without credentials: the endpoint takes a bearer token,
  never the session cookie. Any other origin gets no CORS header, and the SDK still refuses its
  request with 403.

The dashboard, the login and consent pages and the REST API use the session cookie: they never
get a CORS header, so another site's page cannot read them (``tests/web/test_cors.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from litestar.enums import ScopeType
from litestar.middleware import DefineMiddleware
from litestar.types import ASGIApp, HTTPResponseBodyEvent, HTTPResponseStartEvent, Message, Receive, Scope, Send

from campus_mcp.assembly.icons import ICONS_PATH
from campus_mcp.assembly.registry import Registry
from campus_mcp.base.mcp_paths import MCP_PATH, PRM_PATH
from campus_mcp.mcp.endpoint import transport_security
from campus_mcp.mcp.server_card import AI_CATALOG_PATH, CARD_PATH, CARD_SUFFIX, CARDS_PATH
from campus_mcp.oauth.server import REGISTER_PATH, REVOKE_PATH, TOKEN_PATH

AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
OIDC_METADATA_PATH = "/.well-known/openid-configuration"
# How long a browser may keep a preflight answer (Chromium keeps at most two hours).
PREFLIGHT_MAX_AGE = 7200
PUBLIC_HEADERS = "Authorization, Content-Type, Mcp-Protocol-Version, If-None-Match"
MCP_HEADERS = "Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID"
# Headers of the 2026-07-28 era that carry a tool's arguments (Mcp-Param-<name>) are named per tool.
MCP_PARAM_PREFIX = "mcp-param-"
EXPOSED = "ETag, WWW-Authenticate, Retry-After, Mcp-Session-Id, Mcp-Protocol-Version"


def public_methods(path: str) -> str | None:
    """The methods a cross-origin page may use on ``path`` when it is a public sign-in route."""
    if path in (AS_METADATA_PATH, OIDC_METADATA_PATH, CARD_PATH, AI_CATALOG_PATH):
        return "GET"
    if (is_mcp_path(path) and path.endswith(CARD_SUFFIX)) or path.startswith(ICONS_PATH + "/"):
        return "GET"  # the cards where the draft puts them, and the icons they name
    if path == PRM_PATH or path.startswith(PRM_PATH + "/") or path.startswith(CARDS_PATH + "/"):
        return "GET"
    if path in (REGISTER_PATH, TOKEN_PATH, REVOKE_PATH):
        return "POST"
    return None


def is_mcp_path(path: str) -> bool:
    return path == MCP_PATH or path.startswith(MCP_PATH + "/")


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    """The MCP SDK's own Origin rule (TransportSecurityMiddleware): exact, or ``scheme://host:*``."""
    for pattern in allowed:
        if origin == pattern:
            return True
        if pattern.endswith(":*"):
            port = origin.removeprefix(pattern[:-1])
            if port != origin and port.isdigit():
                return True
    return False


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


class CorsMiddleware:
    """ASGI middleware: answers preflights and adds the CORS headers, for the routes above only."""

    def __init__(self, app: ASGIApp, *, mcp_origins: Sequence[str]) -> None:
        self.app = app
        self.mcp_origins = tuple(mcp_origins)

    def _grant(self, path: str, origin: str) -> tuple[str, str, str, bool] | None:
        """(allowed origin, methods, request headers, varies by origin), or None: no CORS here."""
        methods = public_methods(path)
        if methods is not None:
            return "*", methods, PUBLIC_HEADERS, False
        if is_mcp_path(path) and origin_allowed(origin, self.mcp_origins):
            return origin, "POST", MCP_HEADERS, True
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        grant = self._grant(scope["path"], origin) if origin else None
        if grant is None:
            await self.app(scope, receive, send)
            return
        allow_origin, methods, allowed_headers, varies = grant
        common = [(b"access-control-allow-origin", allow_origin.encode("latin-1"))]
        if varies:
            common.append((b"vary", b"Origin"))
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            if varies:
                # Tool arguments travel in headers named for the tool: allow those the page asks for.
                asked = [h.strip() for h in _header(scope, b"access-control-request-headers").split(",")]
                params = [h for h in asked if h.lower().startswith(MCP_PARAM_PREFIX)]
                allowed_headers = ", ".join([allowed_headers, *params])
            answer = [
                *common,
                (b"access-control-allow-methods", f"{methods}, OPTIONS".encode()),
                (b"access-control-allow-headers", allowed_headers.encode("latin-1")),
                (b"access-control-max-age", str(PREFLIGHT_MAX_AGE).encode()),
            ]
            await send(HTTPResponseStartEvent(type="http.response.start", status=204, headers=answer))
            await send(HTTPResponseBodyEvent(type="http.response.body", body=b"", more_body=False))
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if not k.lower().startswith(b"access-control-")
                ]
                headers.extend(common)
                headers.append((b"access-control-expose-headers", EXPOSED.encode()))
                message = HTTPResponseStartEvent(type="http.response.start", status=message["status"], headers=headers)
            await send(message)

        await self.app(scope, receive, send_with_cors)


def cors_middleware(registry: Registry) -> DefineMiddleware:
    """The app's CORS middleware; the MCP endpoints trust the origins the DNS-rebinding guard does."""
    return DefineMiddleware(CorsMiddleware, mcp_origins=transport_security(registry).allowed_origins)
