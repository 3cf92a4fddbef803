"""Server cards: what a registry or a client reads about an MCP endpoint before it connects.

Where the draft of the MCP server-card extension puts them (modelcontextprotocol/
experimental-ext-server-card at 8924e08, ``docs/discovery.md``, "Hosted Server Card Location" and
"AI Catalog"): each endpoint's card at ``<endpoint>/server-card`` (``/api/mcp/server-card``,
``/api/mcp/toolboxes/server-card``, ``/api/mcp/{family}/server-card``), and every card listed in
the host's AI Catalog, ``GET /.well-known/ai-catalog.json`` (Agent-Card/ai-catalog,
``specification/ai-catalog.md``). The earlier places stay as aliases for clients that learnt them:
``/.well-known/mcp/server-card.json`` (``/api/mcp``) and ``/.well-known/mcp/server-card/{endpoint}.json``.

The shape is the draft schema's (``schemas/server-card.schema.json``, a copy of
``https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json``, see the README
beside it): identity, icons, remotes. A card enumerates no primitives: the draft leaves tools,
prompts and resources to the runtime lists (the full definitions made the flat card 64 KB), so
only their names are kept, in ``_meta`` under the card's own name (the draft's extension point),
beside the sign-in details (the protected resource metadata, the scopes). A remote keeps
SEP-2127's ``authentication``.

A card is the same for every reader and changes only on a deploy: it is built once per app,
served with ``Cache-Control: public`` and a strong ``ETag``, and ``If-None-Match`` gets a 304.
It is readable cross-origin (``campus_mcp.web.cors``).
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

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.assembly.icons import icons_of
from campus_mcp.assembly.registry import Registry
from campus_mcp.base.mcp_paths import MCP_PATH, PRM_PATH
from campus_mcp.mcp.endpoint import serves_endpoint
from campus_mcp.mcp.instructions import topics
from campus_mcp.mcp.server import with_dependencies
from campus_mcp.plugin.contributions import AppResource, Prompt, Tool
from campus_mcp.plugin.errors import quote_input
from campus_mcp.version import __version__

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
CARD_SUFFIX = "/server-card"  # the draft's <streamable-http-url>/server-card
CARD_PATH = "/.well-known/mcp/server-card.json"  # alias of /api/mcp/server-card
CARDS_PATH = "/.well-known/mcp/server-card"  # + "/{endpoint}.json": aliases of the others
AI_CATALOG_PATH = "/.well-known/ai-catalog.json"
# The draft's media type; a client asks for it with Accept. SEP-2127 says application/json.
CARD_MEDIA_TYPE = "application/mcp-server-card+json"
AI_CATALOG_MEDIA_TYPE = "application/ai-catalog+json"
AI_CATALOG_VERSION = "1.0"
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
    tools: Sequence[str]  # names only: the definitions are tools/list's
    prompts: Sequence[Prompt] = ()
    resources: Sequence[AppResource] = ()
    family: str | None = None  # whose icon the card shows (None: the campus's)

    @property
    def path(self) -> str:
        return MCP_PATH + (f"/{self.slug}" if self.slug else "")


def _tool_names(tools: Sequence[Tool]) -> list[str]:
    return [t.name for t in tools]


def _views_of(registry: Registry, tools: Sequence[Tool]) -> list[AppResource]:
    uris = {t.app_resource for t in tools if t.app_resource}
    return [app for uri, app in registry.app_resources.items() if uri in uris]


def toolbox_definitions() -> list[str] | None:
    """The names of the four meta-tools of ``/api/mcp/toolboxes`` (seed 004)."""
    try:
        from campus_mcp.mcp.toolboxes import META_TOOLS  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # a host without toolbox mode has no such endpoint
        return None
    return [tool.name for tool in META_TOOLS]


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

    A family is an endpoint when it has a tool or a prompt (``campus_mcp.mcp.endpoint.serves_endpoint``:
    a family of views only has none of its own). A family's card names what its endpoint serves:
    its own contributions and those of the families it depends on (the prompts family brings the
    catalog and the schedule, whose tools its prompts name).
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
            tools=_tool_names(every_tool),
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
        if not serves_endpoint(registry, name) or name == TOOLBOXES:
            continue
        served = with_dependencies(registry, name)
        tools = [t for t in every_tool if t.plugin in served]
        endpoints[name] = CardEndpoint(
            slug=name,
            title=f"{product}: {info.title}",
            description=info.description,
            tools=_tool_names(tools),
            prompts=[p for p in registry.prompts.values() if p.plugin in served],
            resources=_views_of(registry, tools),
            family=name,
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
        # The endpoint's serverInfo icons, as server/discover gives them (the draft asks the two to agree).
        "icons": icons_of(registry).as_json(endpoint.family),
        "remotes": [remote],
        "_meta": {
            name: {
                # Names only: a client lists the definitions once connected (tools/list and the others).
                "tools": list(endpoint.tools),
                "prompts": [p.name for p in endpoint.prompts],
                "resources": [app.uri for app in endpoint.resources],
                "oauth": {
                    "protectedResourceMetadata": base + PRM_PATH + MCP_PATH,
                    "authorizationServer": base,
                    "resource": settings.mcp_url,
                    "scopes": scopes,
                    # Tools that only read public data work without signing in (when the campus allows it).
                    "anonymousAccess": settings.anonymous_access,
                },
            }
        },
    }
    return card


@dataclasses.dataclass(frozen=True)
class ServedCard:
    body: bytes
    etag: str  # strong: the body's digest, quoted

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> ServedCard:
        body = json.dumps(document, ensure_ascii=False, sort_keys=True).encode()
        return cls(body=body, etag='"' + hashlib.sha256(body).hexdigest()[:40] + '"')


def card_path(slug: str) -> str:
    """Where the draft puts an endpoint's card: its streamable-HTTP URL + ``/server-card``."""
    return MCP_PATH + (f"/{slug}" if slug else "") + CARD_SUFFIX


def ai_catalog(registry: Registry, slugs: Sequence[str]) -> dict[str, Any]:
    """The host's AI Catalog: one entry per card, at its ``<endpoint>/server-card`` URL.

    An entry carries the members both texts ask for: the MCP draft's (``identifier``, ``type``,
    ``url``: discovery.md after ADR 0014 renamed ``mediaType`` and dropped ``displayName``) and the
    AI Catalog 1.0 specification's (``identifier``, ``displayName``, ``mediaType``, ``url``), so a
    client of either finds the card. Identifiers are ``urn:air:{host}:mcp:{name}`` (ADR 0015).
    """
    settings = registry.settings
    base = settings.base_url
    host = urlsplit(base).hostname or "localhost"
    endpoints = card_endpoints(registry)
    entries = []
    for slug in slugs:
        endpoint = endpoints[slug]
        entries.append(
            {
                "identifier": f"urn:air:{host}:mcp:campus-mcp" + (f"-{slug}" if slug else ""),
                "type": CARD_MEDIA_TYPE,
                "mediaType": CARD_MEDIA_TYPE,
                "displayName": fit(endpoint.title),
                "description": fit(endpoint.description),
                "version": __version__,
                "url": base + card_path(slug),
            }
        )
    icons = icons_of(registry).as_json()
    return {
        "specVersion": AI_CATALOG_VERSION,
        "host": {"displayName": settings.product_name, "documentationUrl": base + "/", "logoUrl": icons[0]["src"]},
        "entries": entries,
    }


class ServerCards:
    """The deployment's cards and AI Catalog, built on the first request and kept (a deploy changes them)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cards: dict[str, ServedCard] | None = None
        self._catalog: ServedCard | None = None

    def cards(self) -> Mapping[str, ServedCard]:
        if self._cards is None:
            endpoints = card_endpoints(self.registry)
            self._cards = {slug: ServedCard.of(build_card(self.registry, e)) for slug, e in endpoints.items()}
        return self._cards

    def catalog(self) -> ServedCard:
        if self._catalog is None:
            self._catalog = ServedCard.of(ai_catalog(self.registry, list(self.cards())))
        return self._catalog

    def url_of(self, slug: str) -> str:
        return self.registry.settings.base_url + card_path(slug)


def _matches(if_none_match: str, etag: str) -> bool:
    # RFC 9110 13.1.2: If-None-Match compares weakly, so W/"x" matches "x"; "*" matches any.
    wanted = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in wanted or etag in wanted


def card_response(
    request: Request[Any, Any, Any], card: ServedCard, own_type: str = CARD_MEDIA_TYPE
) -> Response[bytes]:
    accept = request.headers.get("accept", "")
    media_type = own_type if own_type in accept else "application/json"
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


def _no_card(cards: ServerCards, asked: str) -> Response[Any]:
    known = ", ".join(cards.url_of(s) for s in cards.cards())
    return Response(
        {
            "error": "NotFound",
            "message": (
                f"No MCP endpoint has the server card {quote_input(asked)}. The cards of this server: {known} "
                f"(all listed in {cards.registry.settings.base_url}{AI_CATALOG_PATH})."
            ),
        },
        status_code=404,
    )


NO_PARITY = {"exclude_from_parity": True}


@get(
    [card_path(""), CARD_PATH],
    name="server_card",
    opt=NO_PARITY,
    include_in_schema=False,
    sync_to_thread=False,
)
def server_card(request: Request[Any, Any, Any], state: State) -> Response[bytes]:
    return card_response(request, _cards(state).cards()[""])


@get(MCP_PATH + "/{slug:str}" + CARD_SUFFIX, opt=NO_PARITY, include_in_schema=False, sync_to_thread=False)
def endpoint_server_card(request: Request[Any, Any, Any], state: State, slug: FromPath[str]) -> Response[Any]:
    cards = _cards(state)
    served = cards.cards()
    if slug and slug in served:
        return card_response(request, served[slug])
    return _no_card(cards, f"{MCP_PATH}/{slug}{CARD_SUFFIX}")


@get(CARDS_PATH + "/{file:str}", opt=NO_PARITY, include_in_schema=False, sync_to_thread=False)
def well_known_server_card(request: Request[Any, Any, Any], state: State, file: FromPath[str]) -> Response[Any]:
    """The earlier place of an endpoint's card, kept as an alias (the same body and ETag)."""
    cards = _cards(state)
    served = cards.cards()
    slug = file.removesuffix(".json") if file.endswith(".json") else None
    if slug and slug in served:
        return card_response(request, served[slug])
    return _no_card(cards, file)


@get(AI_CATALOG_PATH, opt=NO_PARITY, include_in_schema=False, sync_to_thread=False)
def ai_catalog_document(request: Request[Any, Any, Any], state: State) -> Response[bytes]:
    return card_response(request, _cards(state).catalog(), AI_CATALOG_MEDIA_TYPE)


SERVER_CARD_HANDLERS = [server_card, endpoint_server_card, well_known_server_card, ai_catalog_document]
