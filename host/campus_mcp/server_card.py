"""Server cards: what a registry or a client reads about an MCP endpoint before it connects.

``GET /.well-known/mcp/server-card.json`` describes ``/api/mcp``, every enabled tool;
``GET /.well-known/mcp/server-card/{endpoint}.json`` describes one of the other endpoints
(``toolboxes``, one per family: ``catalog``, ``dining``...), the way SEP-2127 lays out several
cards on one host. The shape follows the draft schema of the MCP server-card extension
(``schemas/server-card.schema.json``, a copy of
``https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json``, see the README
beside it). The draft's card is open: SEP-2127's own fields (``tools``, ``prompts``,
``resources``, a remote's ``authentication``) are kept beside it, so a client that reads either
version finds what it needs; the sign-in details (the protected resource metadata, the scopes)
are ``_meta`` under the card's own name.

A card is the same for every reader and changes only on a deploy: it is built once per app,
served with ``Cache-Control: public`` and a strong ``ETag``, and ``If-None-Match`` gets a 304.
It is readable cross-origin (``campus_mcp.cors``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.params import FromPath
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from campus_mcp.contributions import AppResource, Prompt, Tool
from campus_mcp.deployment import Deployment
from campus_mcp.endpoint import MCP_PATH, PRM_PATH
from campus_mcp.errors import quote_input
from campus_mcp.instructions import topics
from campus_mcp.registry import Registry
from campus_mcp.version import __version__

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
CARD_PATH = "/.well-known/mcp/server-card.json"
CARDS_PATH = "/.well-known/mcp/server-card"  # + "/{endpoint}.json"
# The draft's media type; a client asks for it with Accept. SEP-2127 says application/json.
CARD_MEDIA_TYPE = "application/mcp-server-card+json"
DESCRIPTION_LIMIT = 100  # the schema's maxLength of description and title
CACHE_SECONDS = 3600
TOOLBOXES = "toolboxes"
# Every protocol version the SDK server answers in: the initialize handshake's versions (an
# initialize asking for one of them gets it back) and the stateless era's (server/discover).
PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)


def fit(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """``text`` within ``limit`` characters, cut after a whole word with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:. ")
    return cut + "…"


def namespace_of(base_url: str) -> str:
    """The reverse-DNS namespace of the public URL's host (``mcp.wit.edu`` -> ``edu.wit.mcp``).

    A name must have one; an IP address or a one-label host (a machine on loopback) has none, so
    it is ``localhost``: a card from such a host is a developer's.
    """
    host = urlsplit(base_url).hostname or ""
    try:
        ipaddress.ip_address(host)
        return "localhost"
    except ValueError:
        pass
    labels = [label for label in host.split(".") if label]
    return ".".join(reversed(labels)) if len(labels) > 1 else "localhost"


@dataclasses.dataclass(frozen=True)
class CardEndpoint:
    """One MCP endpoint as a card describes it: where it is and what a signed-in client finds."""

    slug: str  # "" for /api/mcp
    title: str
    description: str
    tools: Sequence[dict[str, Any]]
    prompts: Sequence[Prompt] = ()
    resources: Sequence[AppResource] = ()

    @property
    def path(self) -> str:
        return MCP_PATH + (f"/{self.slug}" if self.slug else "")


def _tool_definitions(registry: Registry, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    # The very definitions tools/list answers (the same function builds them).
    from campus_mcp.mcp_server import describe_tool

    return [describe_tool(registry, t).model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def _views_of(registry: Registry, tools: Sequence[Tool]) -> list[AppResource]:
    uris = {t.app_resource for t in tools if t.app_resource}
    return [app for uri, app in registry.app_resources.items() if uri in uris]


def toolbox_definitions() -> list[dict[str, Any]] | None:
    """The four meta-tools of ``/api/mcp/toolboxes`` (seed 004), as its tools/list gives them."""
    try:
        from campus_mcp.toolboxes import META_TOOLS  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # a host without toolbox mode has no such endpoint
        return None
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in META_TOOLS]


def covering(lead: str, names: Sequence[str], limit: int = DESCRIPTION_LIMIT) -> str:
    """``lead`` and as many of ``names`` as fit in ``limit`` characters, "and more" for the rest."""
    if not names:
        return f"{lead} nothing yet (no family is enabled)."
    for count in range(len(names), 0, -1):
        listed = ", ".join(names[:count])
        text = f"{lead} {listed}." if count == len(names) else f"{lead} {listed} and more."
        if len(text) <= limit:
            return text
    return fit(f"{lead} {', '.join(names)}.", limit)


def card_endpoints(registry: Registry) -> dict[str, CardEndpoint]:
    """Every endpoint of this deployment, by slug: the flat one, toolboxes, one per family.

    A family is an endpoint when it has a tool (``campus_mcp.endpoint``: a family of prompts or
    views only has none of its own).
    """
    settings = registry.settings
    product = settings.product_name
    every_tool = list(registry.tools.values())
    listed = topics(registry)
    endpoints = {
        "": CardEndpoint(
            slug="",
            title=product,
            description=covering(f"{settings.campus_short_name} data for AI assistants:", listed),
            tools=_tool_definitions(registry, every_tool),
            prompts=list(registry.prompts.values()),
            resources=list(registry.app_resources.values()),
        )
    }
    meta_tools = toolbox_definitions()
    if meta_tools is not None:
        endpoints[TOOLBOXES] = CardEndpoint(
            slug=TOOLBOXES,
            title=f"{product} toolboxes",
            description=covering(f"{settings.campus_short_name} data in toolboxes:", listed),
            tools=meta_tools,
            prompts=list(registry.prompts.values()),
            resources=list(registry.app_resources.values()),
        )
    for name, info in registry.plugins.items():
        tools = [t for t in every_tool if t.plugin == name]
        if not tools or name == TOOLBOXES:
            continue
        endpoints[name] = CardEndpoint(
            slug=name,
            title=f"{product}: {info.title}",
            description=info.description,
            tools=_tool_definitions(registry, tools),
            prompts=[p for p in registry.prompts.values() if p.plugin == name],
            resources=_views_of(registry, tools),
        )
    return endpoints


def build_card(registry: Registry, endpoint: CardEndpoint) -> dict[str, Any]:
    """The server card of ``endpoint``, as the draft schema and SEP-2127 shape it."""
    settings = registry.settings
    base = settings.base_url
    name = f"{namespace_of(base)}/campus-mcp" + (f"-{endpoint.slug}" if endpoint.slug else "")
    scopes = list(registry.scopes)
    remote: dict[str, Any] = {
        "type": "streamable-http",
        "url": base + endpoint.path,
        "supportedProtocolVersions": list(PROTOCOL_VERSIONS),
        # SEP-2127's field. Every endpoint is the one OAuth resource (a token for /api/mcp works on all).
        "authentication": {"required": not settings.anonymous_access, "schemes": ["oauth2"]},
    }
    card: dict[str, Any] = {
        "$schema": SCHEMA_URL,
        "name": name,
        "version": __version__,
        "title": fit(endpoint.title),
        "description": fit(endpoint.description),
        "websiteUrl": base + "/",
        "remotes": [remote],
        "capabilities": {
            "tools": {"listChanged": False},
            "prompts": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "completions": {},
        },
        "tools": list(endpoint.tools),
        "prompts": [_prompt(p) for p in endpoint.prompts],
        "resources": [_resource(app) for app in endpoint.resources],
        "_meta": {
            name: {
                "oauth": {
                    "protectedResourceMetadata": base + PRM_PATH + MCP_PATH,
                    "authorizationServer": base,
                    "resource": settings.mcp_url,
                    "scopes": scopes,
                    # Tools that only read public data work without signing in (when the campus allows it).
                    "anonymousAccess": settings.anonymous_access,
                }
            }
        },
    }
    return card


def _prompt(prompt: Prompt) -> dict[str, Any]:
    described: dict[str, Any] = {"name": prompt.name, "title": prompt.title, "description": prompt.description}
    described["arguments"] = [
        {"name": a.name, "description": a.description, "required": a.required} for a in prompt.arguments
    ]
    return described


def _resource(app: AppResource) -> dict[str, Any]:
    from mcp.server.apps import APP_MIME_TYPE

    return {
        "uri": app.uri,
        "name": app.name,
        "title": app.title,
        "description": app.description,
        "mimeType": APP_MIME_TYPE,
    }


@dataclasses.dataclass(frozen=True)
class ServedCard:
    body: bytes
    etag: str  # strong: the body's digest, quoted


class ServerCards:
    """The deployment's cards, built on the first request (tool schemas cost a few milliseconds)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cards: dict[str, ServedCard] | None = None

    def cards(self) -> Mapping[str, ServedCard]:
        if self._cards is None:
            built = {}
            for slug, endpoint in card_endpoints(self.registry).items():
                body = json.dumps(build_card(self.registry, endpoint), ensure_ascii=False, sort_keys=True).encode()
                built[slug] = ServedCard(body=body, etag='"' + hashlib.sha256(body).hexdigest()[:40] + '"')
            self._cards = built
        return self._cards

    def url_of(self, slug: str) -> str:
        base = self.registry.settings.base_url
        return base + (f"{CARDS_PATH}/{slug}.json" if slug else CARD_PATH)


def _matches(if_none_match: str, etag: str) -> bool:
    # RFC 9110 13.1.2: If-None-Match compares weakly, so W/"x" matches "x"; "*" matches any.
    wanted = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in wanted or etag in wanted


def card_response(request: Request[Any, Any, Any], card: ServedCard) -> Response[bytes]:
    accept = request.headers.get("accept", "")
    media_type = CARD_MEDIA_TYPE if CARD_MEDIA_TYPE in accept else "application/json"
    headers = {
        "ETag": card.etag,
        "Cache-Control": f"public, max-age={CACHE_SECONDS}",
        "Vary": "Accept",
    }
    if _matches(request.headers.get("if-none-match", ""), card.etag):
        return Response(b"", status_code=304, headers=headers, media_type=media_type)
    return Response(card.body, status_code=200, headers=headers, media_type=media_type)


def _cards(state: State) -> ServerCards:
    # Made on the first request and kept on the app: create_app need not know about cards.
    cards = state.get("server_cards")
    if not isinstance(cards, ServerCards):
        deployment: Deployment = state.deployment
        cards = state["server_cards"] = ServerCards(deployment.registry)
    return cards


NO_PARITY = {"exclude_from_parity": True}


@get(CARD_PATH, opt=NO_PARITY, include_in_schema=False, sync_to_thread=False)
def server_card(request: Request[Any, Any, Any], state: State) -> Response[bytes]:
    return card_response(request, _cards(state).cards()[""])


@get(CARDS_PATH + "/{file:str}", opt=NO_PARITY, include_in_schema=False, sync_to_thread=False)
def endpoint_server_card(request: Request[Any, Any, Any], state: State, file: FromPath[str]) -> Response[Any]:
    cards = _cards(state)
    served = cards.cards()
    slug = file.removesuffix(".json") if file.endswith(".json") else None
    if slug and slug in served:
        return card_response(request, served[slug])
    known = ", ".join(cards.url_of(s) for s in served)
    return Response(
        {
            "error": "NotFound",
            "message": f"No MCP endpoint has the server card {quote_input(file)}. The cards of this server: {known}.",
        },
        status_code=404,
    )


SERVER_CARD_HANDLERS = [server_card, endpoint_server_card]
