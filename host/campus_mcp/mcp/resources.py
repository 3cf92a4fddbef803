"""The ``campus://`` resources of one endpoint: templates a plugin contributes (``register_resources``).

A resource is the answer of a read tool, called with the URI's variables as its arguments, through
the same path as a ``tools/call`` of it (validation, the scope check, the handler, the advisory):
``campus://sections/202710/40213`` is ``get_section(term="202710", crn="40213")``, byte for byte the
JSON of that answer. A resource whose tool needs a scope that is not always on is the student's own:
its reads carry ``cacheScope: private`` and the permission error of the tool when the token lacks
the scope.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate

from campus_mcp.assembly.access import check_call
from campus_mcp.assembly.icons import icons_of
from campus_mcp.assembly.registry import Registry
from campus_mcp.plugin.contributions import Completion, ResourceTemplate, Tool
from campus_mcp.plugin.errors import CampusError, PermissionMissing, quote_input, without_echoes
from campus_mcp.plugin.principal import Principal

if TYPE_CHECKING:
    from campus_mcp.plugin.tool_context import ToolContext

JSON_MIME_TYPE = "application/json"
# Seats change every refresh (30 minutes in registration): a client may keep a read a minute, and a
# subscription tells it sooner. The same for a student's schedule, which their own writes change.
RESOURCE_TTL_MS = 60_000
# The spec's code for a resource the server does not have.
RESOURCE_NOT_FOUND = -32002


@dataclasses.dataclass(frozen=True)
class Served:
    """One template of an endpoint, parsed, with the tool whose answer it is."""

    template: ResourceTemplate
    parsed: UriTemplate
    tool: Tool
    # The tool's scope is not always on: the resource is the reader's own.
    private: bool


@dataclasses.dataclass(frozen=True)
class Found:
    """A URI matched to its template: the tool's arguments from it."""

    served: Served
    arguments: dict[str, str]


class CampusResources:
    """The templates an endpoint serves (those whose tool it serves), and their reads."""

    def __init__(self, registry: Registry, tools: Mapping[str, Tool]) -> None:
        public = frozenset(name for name, scope in registry.scopes.items() if scope.always_on)
        self.registry = registry
        self.served: dict[str, Served] = {
            key: Served(
                template, UriTemplate.parse(key), tools[template.tool], tools[template.tool].scope not in public
            )
            for key, template in registry.resources.items()
            if template.tool in tools
        }

    def __bool__(self) -> bool:
        return bool(self.served)

    def templates(self, *, inline_icons: bool = False) -> list[types.ResourceTemplate]:
        """The templates, each with its family's icon (inline: a data URI, for stdio)."""

        icons = icons_of(self.registry)
        return [
            types.ResourceTemplate(
                uri_template=key,
                name=served.template.name,
                title=served.template.title,
                description=_description(served),
                mime_type=JSON_MIME_TYPE,
                icons=icons.of(served.template.plugin, inline=inline_icons),
            )
            for key, served in self.served.items()
        ]

    def find(self, uri: str) -> Found | None:
        for served in self.served.values():
            matched = served.parsed.match(uri)
            if matched is not None and all(isinstance(v, str) and v for v in matched.values()):
                return Found(served, {k: v for k, v in matched.items() if isinstance(v, str)})
        return None

    def unknown(self, uri: str) -> MCPError:
        listed = ", ".join(self.served) or "none"
        return MCPError(
            RESOURCE_NOT_FOUND,
            f"Unknown resource {quote_input(uri)}. This endpoint's resource templates are: {listed} "
            "(resources/templates/list describes them).",
        )

    def completer(self, ref: types.ResourceTemplateReference, argument: str) -> Completion | None:
        served = self.served.get(ref.uri)
        if served is None:
            return None
        name = served.template.completers.get(argument)
        return None if name is None else self.registry.completions.get(name)

    def may_follow(self, found: Found, principal: Principal) -> None:
        """Raise the tool's permission error when ``principal`` may not read ``found``."""

        check_call(self.registry, principal, found.served.tool)


def _description(served: Served) -> str:
    tool = served.tool.name
    whose = " The signed-in student's own; needs the same permission as the tool." if served.private else ""
    return f"{served.template.description} The same JSON as the answer of the tool {tool}.{whose}"


def read_result(uri: str, text: str, *, private: bool) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON_MIME_TYPE, text=text)],
        ttl_ms=RESOURCE_TTL_MS,
        cache_scope="private" if private else "public",
    )


def read_error(exc: CampusError, arguments: Mapping[str, Any]) -> MCPError:
    """A tool's deliberate error as the JSON-RPC error of a read: the same words the tool says."""
    if isinstance(exc, PermissionMissing):
        return MCPError(types.INVALID_PARAMS, exc.message)
    code = RESOURCE_NOT_FOUND if exc.status == 404 else types.INVALID_PARAMS
    return MCPError(code, without_echoes(exc.message, dict(arguments)))


async def followed_uris(found: Found, context: ToolContext) -> Sequence[str]:
    """The public resources whose change changes ``found`` for this reader (itself, when public)."""
    follows = found.served.template.follows
    if follows is None:
        return [] if found.served.private else [found.served.parsed.expand(found.arguments)]
    return list(await follows(context, found.arguments))
