"""Toolbox mode (seed 004): ``/api/mcp/toolboxes`` lists four meta-tools instead of every tool.

A client that cannot hold thirty tool definitions in its context lists the toolboxes (one per
enabled family that offers a tool or a prompt, with the family's title and description), opens
the one it needs (the same tool definitions ``tools/list`` gives on ``/api/mcp``, and the names of
the family's prompts), then runs a tool through ``call_read_only`` or ``call_tool``.

A proxied call is not a second implementation of a tool call: it becomes the ``tools/call`` of
the named tool (the same request, only its name and arguments replaced) and goes through
:meth:`CampusServer.call_tool`, the path a direct call takes on ``/api/mcp``: argument validation,
the scope check and its permission error, the write tools' confirmation (``input_required``, its
sealed ``requestState`` bound to this ``call_tool`` request), idempotency keys, the advisory,
metrics and rate limits. The 403 step-up of the endpoint sees through a proxied call too
(:meth:`Toolboxes.proxied_tool`). The only checks here are the proxy's own: the toolbox or tool
exists, and ``call_read_only`` runs only a tool that changes nothing.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.icons import Icons
from campus_mcp.assembly.registry import Registry
from campus_mcp.base import metrics
from campus_mcp.mcp.instructions import offers_something
from campus_mcp.plugin.contributions import InstructionFragment, Prompt, Tool
from campus_mcp.plugin.errors import quote_input
from campus_mcp.plugin.offers import Offers
from campus_mcp.plugin.principal import Principal, current_principal
from campus_mcp.plugin.route_errors import describe_problems, field_problems


class ToolServer(Protocol):
    """What the toolboxes use of the server that holds them (:class:`campus_mcp.mcp.server.CampusServer`)."""

    @property
    def registry(self) -> Registry: ...

    @property
    def tools(self) -> Mapping[str, Tool]: ...

    @property
    def prompts(self) -> Mapping[str, Prompt]: ...

    @property
    def icons(self) -> Icons: ...

    @property
    def inline_icons(self) -> bool: ...

    @property
    def offers(self) -> Offers: ...

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]: ...

    def visible_tools(self, principal: Principal) -> list[Tool]: ...

    def listed_prompts(self) -> list[Prompt]: ...

    def describe(self, tool: Tool) -> types.Tool: ...

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult: ...


LIST_TOOLBOXES = "list_toolboxes"
OPEN_TOOLBOX = "open_toolbox"
CALL_READ_ONLY = "call_read_only"
CALL_TOOL = "call_tool"
PROXIES = (CALL_READ_ONLY, CALL_TOOL)

# The schemas and annotations of seed 004's meta-tools.
TOOLBOX_ARGS: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "the toolbox name, as returned by list_toolboxes"}},
    "required": ["name"],
}
PROXY_ARGS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "the tool name, as returned by open_toolbox"},
        "arguments": {"type": "object", "description": "the tool arguments, matching its inputSchema"},
    },
    "required": ["name"],
}
META_TOOLS: tuple[types.Tool, ...] = (
    types.Tool(
        name=LIST_TOOLBOXES,
        title="List toolboxes",
        description="Lists the available toolboxes, each groups related tools and prompts",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name=OPEN_TOOLBOX,
        title="Open a toolbox",
        description="Returns the definitions of the tools in a toolbox and the names of its prompts",
        input_schema=TOOLBOX_ARGS,
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name=CALL_READ_ONLY,
        title="Run a tool that only reads",
        description="Runs a tool that only reads data (proxy: call_read_only) from a toolbox, as returned by open_toolbox",
        input_schema=PROXY_ARGS,
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name=CALL_TOOL,
        title="Run a tool",
        description=(
            "Runs a tool that can change data (proxy: call_tool) from a toolbox, as returned by open_toolbox. "
            "Prefer call_read_only for tools that only read data"
        ),
        input_schema=PROXY_ARGS,
        annotations=types.ToolAnnotations(read_only_hint=False, open_world_hint=False),
    ),
)
_SCHEMAS = {tool.name: tool.input_schema for tool in META_TOOLS}

# Ahead of the families' fragments: they name their tools, which this endpoint runs only by proxy.
TOOLBOX_INSTRUCTIONS = InstructionFragment(
    text=(
        "The tools here are in toolboxes: call list_toolboxes, then open_toolbox for a toolbox's tools; "
        "run one with call_read_only (it only reads) or call_tool (it changes data), giving its name and arguments."
    ),
    priority=0,
    plugin="core",
)


class ToolboxArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(description="the toolbox name, as returned by list_toolboxes")


class ProxyArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(description="the tool name, as returned by open_toolbox")
    arguments: dict[str, Any] | None = Field(default=None, description="the tool arguments, matching its inputSchema")


@dataclasses.dataclass(frozen=True)
class Toolbox:
    """One family as a toolbox: what ``list_toolboxes`` says of it and what ``open_toolbox`` opens."""

    name: str
    title: str
    description: str
    tools: tuple[Tool, ...]
    prompts: tuple[str, ...]


def _answer(tool: str, result: dict[str, Any]) -> types.CallToolResult:
    metrics.count_tool_call(tool, "ok")
    text = json.dumps(result, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=result)


def _refusal(tool: str, message: str) -> types.CallToolResult:
    # A tool error, not a protocol error: the model reads it and calls again with a valid name.
    metrics.count_tool_call(tool, "error")
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


class Toolboxes:
    """The meta-tools of one toolbox-mode server, over the tools that server serves."""

    def __init__(self, server: ToolServer) -> None:
        self.server = server

    def list_tools(self) -> list[types.Tool]:
        # The meta-tools are the campus's own: its icon (a toolbox of list_toolboxes has its family's).
        icons = self.server.icons.of(None, inline=self.server.inline_icons)
        return [tool.model_copy(update={"icons": icons}) for tool in META_TOOLS]

    @staticmethod
    def input_schema(name: str) -> dict[str, Any] | None:
        return _SCHEMAS.get(name)

    def toolboxes(self, principal: Principal) -> list[Toolbox]:
        """The families that offer the caller something: a tool it sees, or a prompt."""
        registry = self.server.registry
        visible = self.server.visible_tools(principal)
        boxes: list[Toolbox] = []
        for name, info in registry.plugins.items():
            if name == "core" or not offers_something(registry, name):
                continue
            tools = tuple(tool for tool in visible if tool.plugin == name)
            prompts = tuple(p.name for p in self.server.listed_prompts() if p.plugin == name)
            if tools or prompts:
                boxes.append(Toolbox(name, info.title, info.description, tools, prompts))
        return boxes

    def proxied_tool(self, name: str, arguments: Any) -> Tool | None:
        """The tool a ``tools/call`` of a proxy would run (for the endpoint's step-up), else None."""
        if name not in PROXIES or not isinstance(arguments, Mapping):
            return None
        name_of_tool = arguments.get("name")
        tool = self.server.tools.get(name_of_tool) if isinstance(name_of_tool, str) else None
        if tool is None or (name == CALL_READ_ONLY and tool.writes):
            return None  # refused by the proxy itself, whatever the token holds
        return tool

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        principal = current_principal.get()
        arguments = params.arguments or {}
        await self.server.offers.refresh(self.server.sessions)  # the tools with data now (campus_mcp.plugin.offers)
        if params.name == LIST_TOOLBOXES:
            return _answer(LIST_TOOLBOXES, {"toolboxes": [self._summary(box) for box in self.toolboxes(principal)]})
        if params.name == OPEN_TOOLBOX:
            return self._open(principal, arguments)
        if params.name in PROXIES:
            return await self._proxy(ctx, params, principal, arguments)
        raise MCPError(types.INVALID_PARAMS, self._unknown_meta_tool(params.name))

    def _summary(self, box: Toolbox) -> dict[str, Any]:
        return {
            "name": box.name,
            "title": box.title,
            "description": box.description,
            "tools": [tool.name for tool in box.tools],
            "prompts": list(box.prompts),
            # The family's icon, as its tools carry it (campus_mcp.assembly.icons), so a client can show the box.
            "icons": [
                icon.model_dump(mode="json", by_alias=True, exclude_none=True)
                for icon in self.server.icons.of(box.name, inline=self.server.inline_icons)
            ],
        }

    def _open(self, principal: Principal, arguments: Mapping[str, Any]) -> types.CallToolResult:
        try:
            name = ToolboxArgs.model_validate(dict(arguments)).name
        except ValidationError as exc:
            return _refusal(OPEN_TOOLBOX, self._bad_arguments(OPEN_TOOLBOX, exc))
        boxes = {box.name: box for box in self.toolboxes(principal)}
        box = boxes.get(name)
        if box is None:
            return _refusal(
                OPEN_TOOLBOX,
                f"Unknown toolbox {quote_input(name)}. The toolboxes are: {', '.join(boxes) or 'none'}; "
                "list_toolboxes describes each. Call open_toolbox again with one of these names.",
            )
        return _answer(
            OPEN_TOOLBOX,
            {
                "name": box.name,
                "title": box.title,
                "description": box.description,
                # Exactly what tools/list gives for these tools on /api/mcp.
                "tools": [
                    self.server.describe(tool).model_dump(mode="json", by_alias=True, exclude_none=True)
                    for tool in box.tools
                ],
                "prompts": list(box.prompts),
            },
        )

    async def _proxy(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        principal: Principal,
        arguments: Mapping[str, Any],
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            proxied = ProxyArgs.model_validate(dict(arguments))
        except ValidationError as exc:
            return _refusal(params.name, self._bad_arguments(params.name, exc))
        visible = {tool.name: tool for tool in self.server.visible_tools(principal)}
        tool = visible.get(proxied.name)
        if tool is None:
            return _refusal(
                params.name,
                f"Unknown tool {quote_input(proxied.name)}. The tools are: {', '.join(sorted(visible)) or 'none'}; "
                "open_toolbox gives their definitions. Call again with one of these names.",
            )
        if params.name == CALL_READ_ONLY and tool.writes:
            return _refusal(
                CALL_READ_ONLY,
                f"{tool.name} changes data, so call_read_only does not run it. Call call_tool with the same "
                "name and arguments; its description says how the student confirms the change.",
            )
        # The same request with the tool's own name and arguments: its requestState, inputResponses
        # and _meta (the client's capabilities, which decide whether it can be asked) go along.
        direct = params.model_copy(update={"name": tool.name, "arguments": proxied.arguments or {}})
        return await self.server.call_tool(ctx, direct)

    def _bad_arguments(self, meta_tool: str, exc: ValidationError) -> str:
        return (
            f"Invalid arguments for {meta_tool}: {describe_problems(field_problems(exc))}. "
            "Fix these arguments and call it again; its inputSchema lists every field."
        )

    def _unknown_meta_tool(self, name: str) -> str:
        message = (
            f"Unknown tool {quote_input(name)}. This endpoint lists toolboxes instead of tools; its tools are: "
            f"{', '.join(tool.name for tool in META_TOOLS)}."
        )
        if name in self.server.tools:
            message += (
                f" {name} is a tool of the toolbox {self.server.tools[name].plugin!r}: call call_read_only or "
                f'call_tool with {{"name": "{name}", "arguments": {{...}}}}.'
            )
        return message
