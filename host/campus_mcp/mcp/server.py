"""The MCP server over the registry: the SDK's low-level ``Server`` with our handlers.

One tool call (DESIGN section 4): find the tool, validate the arguments against its input model
(an error names the field), check the scope (an error says how to add the permission), run the
handler (one call to the plugin's query or service), add the advisory when the tool declares
data sources, and page links when the client's protocol version allows ``resource_link``.
The JSON text is the first content item and ``structuredContent`` holds the same object.

One :class:`CampusServer` serves one endpoint (campus_mcp.mcp.endpoint): every enabled tool
(``/api/mcp``), the same in toolbox mode (``/api/mcp/toolboxes``, campus_mcp.mcp.toolboxes), or one
family (``/api/mcp/{plugin}``: its tools, prompts and their completers and views, and those of the
families it depends on, plus the views its tools draw with). Each has its own instructions and
``server/discover``, assembled from what it serves, so no endpoint promises a tool it lacks.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import mcp_types as types
import pydantic_core
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import X_MCP_HEADER_KEY
from mcp_types import SubscriptionsListenRequestParams
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.access import always_on_scopes, check_call, visible_tools
from campus_mcp.assembly.change_bus import change_bus
from campus_mcp.assembly.deployment import AccessRecorder
from campus_mcp.assembly.icons import icons_of
from campus_mcp.assembly.registry import Registry
from campus_mcp.base import metrics
from campus_mcp.base.db import DATABASE_UNREACHABLE_TOOL_TEXT, database_unreachable
from campus_mcp.base.mcp_paths import MCP_PATH
from campus_mcp.base.metrics import tool_outcome
from campus_mcp.limits import RateLimited, refused_call
from campus_mcp.mcp import confirmation_code, idempotency
from campus_mcp.mcp.advisory import answer_advisory, with_advisory
from campus_mcp.mcp.call_log import log_key_of, log_tool_call
from campus_mcp.mcp.compact_schema import compact_output_schema, compact_schema
from campus_mcp.mcp.instructions import assemble_instructions, server_description
from campus_mcp.mcp.resources import CampusResources, read_error, read_result
from campus_mcp.mcp.subscriptions import CampusListen
from campus_mcp.mcp.toolboxes import TOOLBOX_INSTRUCTIONS, Toolboxes
from campus_mcp.mcp.wire_rules import (
    CacheHintsOnEveryWire,
    ExtensionsOnEveryWire,
    LenientAnswers,
    NamedPromptArguments,
)
from campus_mcp.mcp.writes import call_write_tool, chat_fallback
from campus_mcp.plugin.confirmation import REQUEST_STATE_TTL_SECONDS
from campus_mcp.plugin.contributions import AppResource, Completion, Prompt, Tool
from campus_mcp.plugin.errors import CampusError, PermissionMissing, quote_input, without_echoes
from campus_mcp.plugin.links import PageLink
from campus_mcp.plugin.offers import Offers
from campus_mcp.plugin.principal import Principal, current_principal
from campus_mcp.plugin.route_errors import describe_problems, field_problems
from campus_mcp.plugin.tool_context import ToolContext
from campus_mcp.version import __version__

log = logging.getLogger(__name__)

SERVER_NAME = "campus-mcp"
# Seed 000 "Cache hints": the lists are the same for every token and change on a deploy, or when a
# tool's data arrives (campus_mcp.plugin.offers), which a client listening for list changes hears at once.
CACHE_TTL_MS = 300_000
CACHEABLE = (
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "server/discover",
)
CACHE_HINT = CacheHint(ttl_ms=CACHE_TTL_MS, scope="public")
# resource_link content arrived in 2025-06-18; older clients may refuse a result that has one.
LINKS_SINCE = "2025-06-18"
PROMPT_ARGUMENT_LIMIT = 500
COMPLETION_LIMIT = 100  # seed 000 "Completions": at most 100 values, hasMore when more match


# What a write tool's description says happens on each kind of client (Settings.confirmation_fallback).
_ASKED = "A client with form elicitation asks the student first."
CONFIRMATION_WORDS: dict[str, str] = {
    "page": (
        f"{_ASKED} In any other, the first call changes nothing and answers a question and a link to the "
        "campus's confirmation page: show the student both; the change is made only when the student presses "
        "Confirm there."
    ),
    "in_band": (
        f"{_ASKED} In any other, the first call changes nothing and answers a question and a code: show "
        "the student the question; only if they agree, call again, same arguments plus confirmation."
    ),
    "apply": f"{_ASKED} In any other, the change is saved at once: ask the student first.",
    "refuse": f"{_ASKED} In any other, nothing changes: the student uses the campus dashboard.",
}


def input_schema(tool: Tool, fallback: str = "in_band") -> dict[str, Any]:
    schema = tool.input_model.model_json_schema()
    if tool.writes:
        # Every write tool takes the host's optional idempotency key (campus_mcp.mcp.idempotency) and,
        # when codes are given, the confirmation code (campus_mcp.mcp.confirmation_code).
        extra = {idempotency.FIELD: idempotency.SCHEMA}
        if fallback == "in_band":
            extra[confirmation_code.FIELD] = confirmation_code.SCHEMA
        schema["properties"] = {**schema.get("properties", {}), **extra}
    # Not the model's docstring: it is written for developers; the tool's description says the rest.
    schema.pop("description", None)
    # Nullable fields stay anyOf: single-type dialects refuse a list of types (docs/tool-schema-dialects.md).
    return compact_schema(schema, fold_nullable=False)


def output_schema(tool: Tool) -> dict[str, Any]:
    # Compact, objects below the answer's keys loose (campus_mcp.mcp.compact_schema): a client puts
    # every schema in the model's context.
    schema = tool.output_schema_override or tool.output_model.model_json_schema()
    return compact_output_schema(with_advisory(schema) if tool.data_sources else schema)


def describe_tool(
    registry: Registry, tool: Tool, *, inline_icons: bool = False, fallback: str | None = None
) -> types.Tool:
    meta: dict[str, Any] = {}
    if tool.app_resource:
        meta["ui"] = {"resourceUri": tool.app_resource}
        meta["ui/resourceUri"] = tool.app_resource  # the old flat key, for older hosts
    scope = registry.scopes[tool.scope]
    description = tool.description
    already = (f"Needs {scope.name}", f"Needs the {scope.name} permission")
    if not scope.always_on and not any(said in description for said in already):
        # The name alone, once: the consent screen describes it, and a call without it gets an
        # error that names it and says how to grant it.
        description = f"{description}\n\nNeeds the permission {scope.name!r}."
    fallback = fallback or registry.settings.confirmation_fallback
    if tool.writes:
        description = f"{description}\n\n{CONFIRMATION_WORDS[fallback]}"
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=description,
        input_schema=input_schema(tool, fallback),
        output_schema=output_schema(tool),
        # No annotations.title: the tool's own title says it (the spec makes it optional), and the
        # destructive and idempotent hints mean something only for a tool that writes.
        annotations=types.ToolAnnotations(
            read_only_hint=not tool.writes,
            destructive_hint=False if tool.writes else None,
            idempotent_hint=tool.idempotent if tool.writes else None,
            open_world_hint=tool.open_world,
        ),
        icons=icons_of(registry).of(tool.plugin, inline=inline_icons),
        _meta=meta or None,
    )


def _answer_text(result: Mapping[str, Any]) -> str:
    # No spaces after separators: the model reads the same JSON in about a tenth fewer bytes.
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def _field_errors(error: ValidationError) -> str:
    # The same words a plugin route answers for the same mistake (route_errors).
    return describe_problems(field_problems(error))


def _version_at_least(version: str | None, floor: str) -> bool:
    # Protocol versions are ISO dates, so they compare as strings.
    return bool(version) and str(version) >= floor


def _text_result(message: str, links: Sequence[PageLink] = (), *, with_links: bool) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(type="text", text=message)]
    if with_links:
        content.extend(_link_items(links))
    return types.CallToolResult(content=content, is_error=True)


def _link_items(links: Sequence[PageLink]) -> list[types.ResourceLink]:
    return [
        types.ResourceLink(
            type="resource_link", uri=link.url, name=link.name, title=link.title, description=link.description
        )
        for link in links
    ]


def _request_version(ctx: ServerRequestContext[Any, Any]) -> str | None:
    version = getattr(ctx, "protocol_version", None)
    if version:
        return str(version)
    request = ctx.request
    if request is not None and hasattr(request, "headers"):
        header = request.headers.get("mcp-protocol-version")
        return str(header) if header else None
    return None


def meta_object(meta: Any) -> dict[str, Any]:
    """A request's ``_meta`` (the SDK's ``RequestParamsMeta``, or None) as the JSON object a tool
    reads in ``ToolContext.request_meta``: {} without one."""
    if meta is None:
        return {}
    return meta.model_dump(by_alias=True, exclude_none=True) if isinstance(meta, BaseModel) else dict(meta)


def _request_meta(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    return meta_object(ctx.meta)


# The level this module last gave the SDK's logger; any other level was set by the operator.
_sdk_level_we_set: int | None = None


def set_sdk_log_level(level_name: str) -> None:
    """Give the MCP SDK's loggers (``mcp.*``) the level of CAMPUS_MCP_SDK_LOG_LEVEL.

    At INFO the SDK logs "Terminating session: None" for every stateless request, which buries
    the server's own lines. A level the operator's log config gave the ``mcp`` logger is kept.
    """
    global _sdk_level_we_set
    logger = logging.getLogger("mcp")
    if logger.level not in (logging.NOTSET, _sdk_level_we_set):
        return
    level = logging.getLevelName(level_name.strip().upper())
    if not isinstance(level, int):
        raise ValueError(f"CAMPUS_MCP_SDK_LOG_LEVEL={level_name!r} is not a log level; use WARNING, INFO or DEBUG.")
    logger.setLevel(level)
    _sdk_level_we_set = level


def with_dependencies(registry: Registry, family: str) -> frozenset[str]:
    """``family`` and every enabled plugin it depends on, directly or through another."""
    found: set[str] = set()
    todo = [family]
    while todo:
        name = todo.pop()
        if name in found or name not in registry.plugins:
            continue
        found.add(name)
        todo.extend(registry.plugins[name].depends_on)
    return frozenset(found)


class ToolAnswer(NamedTuple):
    """A ``tools/call`` result, and, when its ``structuredContent`` is a model's JSON-mode dump
    (with the advisory's, made the same way: string keys; strings, numbers, booleans, nulls,
    lists and objects of them), that object's JSON as pydantic writes it (:func:`written_json`:
    the same bytes whatever it does with infinity and NaN, so it has none), which is also its text
    content. Any other answer (a dict a tool made) may hold what JSON cannot, and has none."""

    result: types.CallToolResult | types.InputRequiredResult
    object_json: bytes | None = None


def written_json(value: Mapping[str, Any]) -> tuple[bytes, bool]:
    """A JSON-mode object's JSON, compact, as pydantic writes it with infinity and NaN as null
    (what ``model_dump_json`` and the 2025-11-25 reply write for them), and whether those bytes
    are also what pydantic writes by default, which spells them ``Infinity`` and ``NaN``.

    Written once per answer: the text content is this, and campus_mcp.mcp.fast_call puts the same
    bytes in the reply as ``structuredContent`` instead of writing the object again. When neither
    word is anywhere in the default output (the common case), both modes write the same bytes;
    else the object is written again with them as null, and the two compared (the words may be
    in a string only)."""
    written = pydantic_core.to_json(value)
    if b"NaN" in written or b"Infinity" in written:
        nulled = pydantic_core.to_json(value, inf_nan_mode="null")
        return nulled, nulled == written
    return written, True


class CampusServer:
    """Builds the SDK server of one endpoint and holds what its handlers need.

    ``family``: serve only that plugin's contributions and its dependencies' (``/api/mcp/{plugin}``);
    ``toolboxes``: list the meta-tools of seed 004 instead of the tools (``/api/mcp/toolboxes``);
    ``inline_icons``: icons as ``data:`` URIs (stdio, which has no origin; campus_mcp.assembly.icons).
    """

    def __init__(
        self,
        registry: Registry,
        sessions: async_sessionmaker[AsyncSession],
        *,
        family: str | None = None,
        toolboxes: bool = False,
        inline_icons: bool = False,
    ) -> None:
        set_sdk_log_level(registry.settings.sdk_log_level)
        self.registry = registry
        self.inline_icons = inline_icons
        self.icons = icons_of(registry)
        self._log_key: bytes | None = None  # made on the first call: reading the key may read a file
        self.sessions = sessions
        self.family = family
        # None: every plugin. A family comes with the families it depends on: its tools send the
        # model to theirs (friend_busy_times to my_busy_times, the schedule to list_terms).
        self.plugins: frozenset[str] | None = None if family is None else with_dependencies(registry, family)
        served = self.plugins
        self.tools: dict[str, Tool] = {n: t for n, t in registry.tools.items() if served is None or t.plugin in served}
        # Which of them have something behind them now (campus_mcp.plugin.offers): only those are listed.
        self.offers = Offers(self.tools.values(), on_change=self._lists_changed)
        self._input_schemas: dict[str, dict[str, Any]] = {}
        self._header_schemas: dict[str, dict[str, Any] | None] = {}
        self.prompts: dict[str, Prompt] = {
            n: p for n, p in registry.prompts.items() if served is None or p.plugin in served
        }
        # A family's tools keep the views that draw them (another plugin's, e.g. apps).
        drawn = {tool.app_resource for tool in self.tools.values() if tool.app_resource}
        self.app_resources: dict[str, AppResource] = {
            uri: app
            for uri, app in registry.app_resources.items()
            if served is None or app.plugin in served or uri in drawn
        }
        # The campus:// resources whose tool this endpoint serves (campus_mcp.mcp.resources).
        self.resources = CampusResources(registry, self.tools)
        self.toolboxes = Toolboxes(self) if toolboxes else None
        # The access log of student data (campus_mcp.students.access_log): set by the endpoint and stdio.
        self.access_log: AccessRecorder | None = None
        self.door = MCP_PATH if family is None and not toolboxes else f"{MCP_PATH}/{family or 'toolboxes'}"
        self._public_scopes = always_on_scopes(registry)
        self.server = self._build()

    def visible_tools(self, principal: Principal) -> list[Tool]:
        """The tools of this endpoint the caller sees (access.visible_tools, within what it serves)."""
        hidden = self.offers.hidden
        return [
            tool
            for tool in visible_tools(self.registry, principal)
            if tool.name in self.tools and tool.name not in hidden
        ]

    def listed_prompts(self) -> list[Prompt]:
        """The prompts of this endpoint whose named tools are all listed now (campus_mcp.plugin.offers)."""
        return self.offers.listed_prompts(self.prompts.values(), self.tools)

    async def _lists_changed(self) -> None:
        """A tool appeared or went (its data arrived or left): the endpoint's listeners hear it."""
        if not self.resources:
            return  # no subscriptions/listen here (CampusServer._build)
        from mcp.server.subscriptions import PromptsListChanged, ToolsListChanged

        from campus_mcp.assembly.change_bus import change_bus

        bus = change_bus(self.registry.settings)
        await bus.publish(ToolsListChanged())
        await bus.publish(PromptsListChanged())

    def describe(self, tool: Tool) -> types.Tool:
        return describe_tool(self.registry, tool, inline_icons=self.inline_icons, fallback=self.fallback)

    @property
    def fallback(self) -> str:
        """What a write tool does for a client that cannot ask, on this door (stdio without a public
        URL has no page to link to: the code in the chat)."""
        return chat_fallback(self.registry.settings, stdio=self.door == "stdio")

    def _input_schema_of(self, name: str) -> dict[str, Any] | None:
        if self.toolboxes is not None:
            return self.toolboxes.input_schema(name)
        # Asked on every 2026-07-28 tools/call (the Mcp-Param header check): made once per tool.
        # Generating it per call was a large share of the call's CPU (docs/performance.md).
        if name not in self._input_schemas and name in self.tools:
            self._input_schemas[name] = input_schema(self.tools[name], self.fallback)
        return self._input_schemas.get(name)

    def header_schema_of(self, name: str) -> dict[str, Any] | None:
        """The schema the SDK checks a 2026-07-28 call's ``Mcp-Param-*`` headers against: the tool's
        input schema when it declares such a header (``x-mcp-header``), else None. A schema without
        one makes the SDK check nothing, but only after walking it twice per call."""
        if name in self._header_schemas:
            return self._header_schemas[name]
        schema = self._input_schema_of(name)
        if schema is None:
            return None  # no such tool: not kept, or any name a client sends would be
        self._header_schemas[name] = schema if X_MCP_HEADER_KEY in json.dumps(schema) else None
        return self._header_schemas[name]

    def _build(self) -> Server[Any]:
        registry = self.registry
        served = self.plugins
        first = [TOOLBOX_INSTRUCTIONS] if self.toolboxes is not None else []
        server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            title=registry.settings.product_name,
            description=server_description(registry, served),
            icons=self.icons.of(self.family, inline=self.inline_icons),
            instructions=assemble_instructions(registry, served, first),
            cache_hints={m: CACHE_HINT for m in CACHEABLE},  # type: ignore[misc]
            get_tool_input_schema=self.header_schema_of,
            on_list_tools=self.list_tools,
            # Toolbox mode: the meta-tools, whose proxies end in call_tool (the direct call's path).
            on_call_tool=self.toolboxes.call if self.toolboxes is not None else self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_completion=self.complete,
        )
        if self.app_resources:
            server.extensions[EXTENSION_ID] = {"mimeTypes": [APP_MIME_TYPE]}
        if self.resources:
            # subscriptions/listen (2026-07-28; the SDK answers older wires -32601 as before).
            server.add_request_handler(
                "subscriptions/listen",
                SubscriptionsListenRequestParams,
                CampusListen(self, change_bus(registry.settings)),
            )
        # Ahead of the requestState boundary, which would refuse a call the seed reads as a cancel.
        server.middleware.extend(
            [
                CacheHintsOnEveryWire(CACHE_HINT),
                ExtensionsOnEveryWire(server.extensions),
                LenientAnswers(),
                NamedPromptArguments(),
            ]
        )
        server.middleware.append(
            RequestStateBoundary(
                RequestStateSecurity(keys=[registry.settings.seal_key()], ttl=REQUEST_STATE_TTL_SECONDS),
                default_audience=SERVER_NAME,
            )
        )
        return server

    # tools ---------------------------------------------------------------------------------

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self.toolboxes is not None:
            return types.ListToolsResult(tools=self.toolboxes.list_tools())
        await self.offers.refresh(self.sessions)
        principal = current_principal.get()
        return types.ListToolsResult(tools=[self.describe(tool) for tool in self.visible_tools(principal)])

    def tool_context(
        self, ctx: ServerRequestContext[Any, Any] | None, principal: Principal, plugin: str = ""
    ) -> ToolContext:
        if ctx is None:
            return self.request_context(principal, plugin, None, {})
        return self.request_context(principal, plugin, _request_version(ctx), _request_meta(ctx))

    def request_context(
        self, principal: Principal, plugin: str, protocol_version: str | None, request_meta: dict[str, Any]
    ) -> ToolContext:
        """What a tool's handler gets of one request: the caller, the client's protocol version and
        the request's ``_meta`` (as a JSON object), with the host's settings and sessions."""
        return self.registry.tool_context(
            principal, self.sessions, plugin, protocol_version=protocol_version, request_meta=request_meta
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """One ``tools/call`` of a tool: a direct call, or one a toolbox proxy passes on (the same
        checks for both, so nothing here may assume the request named this tool itself)."""
        return (await self.answer_request(params, _request_version(ctx), _request_meta(ctx))).result

    async def answer_request(
        self, params: types.CallToolRequestParams, protocol_version: str | None, request_meta: dict[str, Any]
    ) -> ToolAnswer:
        """The one answer of a ``tools/call``, given what a call uses of its request: its params, the
        protocol version and the ``_meta`` object (:meth:`call_tool` for the SDK,
        campus_mcp.mcp.fast_call for the hot read, without the SDK's request context). With
        the call's log line (campus_mcp.mcp.call_log) and its access-log entry (student_access); the
        answer comes as a :class:`ToolAnswer`, its object's JSON kept when the reply may reuse it."""
        started = time.perf_counter()
        token = tool_outcome.set(None)
        try:
            return await self._answer_request(params, protocol_version, request_meta)
        finally:
            if self._log_key is None:
                self._log_key = log_key_of(self.registry.settings.seal_key())
            principal = current_principal.get()
            log_tool_call(params.name, started, principal, self._log_key)
            self._record_access(params.name, principal)
            tool_outcome.reset(token)

    def _record_access(self, name: str, principal: Principal) -> None:
        """The call in the access log of student data, when it touched a student's (student_access)."""
        tool = self.tools.get(name)
        if self.access_log is None or tool is None:
            return
        # A permission that is always on reads nothing of a student's; record_call leaves out a
        # caller that is not an app acting for a student (campus_mcp.students.access_log).
        if tool.scope not in self._public_scopes:
            self.access_log.record_call(principal, door=self.door, action=name, outcome=tool_outcome.get() or "error")

    async def _answer_request(
        self, params: types.CallToolRequestParams, protocol_version: str | None, request_meta: dict[str, Any]
    ) -> ToolAnswer:
        """:meth:`answer_request` without its log lines: find the tool, check the limit, run it
        (a write through campus_mcp.mcp.writes), and word every failure for the model."""
        principal = current_principal.get()
        tool = self.tools.get(params.name)
        if tool is not None and tool.name in self.offers.hidden:
            await self.offers.refresh(self.sessions)  # its data may have arrived since the last check
        if tool is None or tool not in self.visible_tools(principal):
            known = ", ".join(sorted(t.name for t in self.visible_tools(principal)))
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool {quote_input(params.name)}. Call tools/list to see the tools; they are: {known}.",
            )
        refusal = refused_call()
        if refusal is not None:
            # The student is over the limit (counted by the endpoint): say when to retry.
            metrics.count_tool_call(tool.name, "rate_limited")
            return ToolAnswer(_text_result(refusal.tool_message, with_links=False))
        context = self.request_context(principal, tool.plugin, protocol_version, request_meta)
        with_links = _version_at_least(context.protocol_version, LINKS_SINCE)
        outcome = "ok"
        object_json: bytes | None = None  # a write's answer is its own dict (campus_mcp.mcp.writes)
        try:
            if tool.writes:
                answer = await call_write_tool(
                    tool, params, context, registry=self.registry, validate=self.validated, finish=self.finish
                )
                if answer.question is not None:
                    metrics.count_tool_call(tool.name, "input_required")
                    return ToolAnswer(answer.question)
                if answer.on_page:
                    metrics.count_tool_call(tool.name, "confirmation_page")
                    if answer.result is None:
                        return ToolAnswer(_text_result(answer.in_chat or "", with_links=False))
                    result = answer.result
                    return ToolAnswer(
                        types.CallToolResult(
                            content=[types.TextContent(type="text", text=_answer_text(result))],
                            structured_content=result,
                        )
                    )
                if answer.in_chat is not None or answer.refused is not None:
                    # Nothing changed: an error result, so no client reads it as the tool's answer.
                    asked = answer.in_chat is not None
                    metrics.count_tool_call(tool.name, "confirmation_requested" if asked else "unconfirmed")
                    return ToolAnswer(_text_result(answer.in_chat or answer.refused or "", with_links=False))
                assert answer.result is not None
                result, links = answer.result, answer.links
                text = _answer_text(result)
                if answer.decision in ("declined", "cancelled"):
                    outcome = answer.decision
                elif answer.confirmed_in_band:
                    outcome = "confirmed_in_band"
            else:
                result, text, links, object_json = await self.run_tool(tool, params.arguments or {}, context)
        except PermissionMissing as exc:
            metrics.count_scope_denial(tool.name, exc.scope)  # "needs a signed-in student": signed_in, as on REST
            metrics.count_tool_call(tool.name, "denied")
            return ToolAnswer(_text_result(exc.message, exc.links, with_links=with_links))
        except MCPError:
            # A protocol error (a bad requestState: -32602) is the client's; the SDK answers it.
            metrics.count_tool_call(tool.name, "error")
            raise
        except RateLimited as exc:
            metrics.count_tool_call(tool.name, "rate_limited")
            return ToolAnswer(_text_result(exc.refusal.tool_message, with_links=False))
        except CampusError as exc:
            metrics.count_tool_call(tool.name, "error")
            # A validator or a query may quote an argument whole: a 1 MB argument, a 1 MB answer.
            return ToolAnswer(_text_result(without_echoes(exc.message, params.arguments or {}), with_links=False))
        except Exception as exc:
            metrics.count_tool_call(tool.name, "failed")
            if database_unreachable(exc):
                # Not a bug: the database is down or cut off (db.database_timeout_seconds bounds the wait).
                log.warning("tool %s: the database cannot be reached (%s)", tool.name, type(exc).__name__)
                return ToolAnswer(_text_result(DATABASE_UNREACHABLE_TOOL_TEXT.format(tool=tool.name), with_links=False))
            log.exception("tool %s failed", tool.name)
            return ToolAnswer(
                _text_result(
                    f"{tool.name} failed on the server. The error was logged; try again later, "
                    "or answer without this tool.",
                    with_links=False,
                )
            )
        metrics.count_tool_call(tool.name, outcome)
        content: list[Any] = [types.TextContent(type="text", text=text)]
        if with_links:
            content.extend(_link_items(links))
        return ToolAnswer(types.CallToolResult(content=content, structured_content=result), object_json)

    async def run_tool(
        self, tool: Tool, arguments: Mapping[str, Any], context: ToolContext
    ) -> tuple[dict[str, Any], str, Sequence[PageLink], bytes | None]:
        """Validate, authorize, run: the whole of one ``tools/call`` of a read tool after the tool
        is found (a write tool's goes through campus_mcp.mcp.writes). The answer comes as its JSON
        object, its JSON text and its page links (:meth:`answer`), and, when the object is a
        model's JSON-mode dump, the text's bytes (:class:`ToolAnswer`)."""
        args = self.validated(tool, arguments)
        check_call(self.registry, context.principal, tool)
        raw = await tool.handler(context, args)
        return await self.answer(tool, context, raw)

    def validated(self, tool: Tool, arguments: Mapping[str, Any]) -> BaseModel:
        try:
            return tool.input_model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise CampusError(
                f"Invalid arguments for {tool.name}: {_field_errors(exc)}. "
                "Fix these arguments and call the tool again; its inputSchema lists every field."
            ) from None

    async def finish(self, tool: Tool, context: ToolContext, raw: Any) -> tuple[dict[str, Any], Sequence[PageLink]]:
        """The answer of a run: the JSON object, its advisory and its page links."""
        result, _text, links, _object_json = await self.answer(tool, context, raw, with_text=False)
        return result, links

    async def answer(
        self, tool: Tool, context: ToolContext, raw: Any, *, with_text: bool = True
    ) -> tuple[dict[str, Any], str, Sequence[PageLink], bytes | None]:
        """The answer of a run as its JSON object, its JSON text ("" unless ``with_text``), its
        page links, and the text's bytes when they may stand for the object in the reply
        (:class:`ToolAnswer`). A model's answer is written by pydantic's writer
        (:func:`written_json`), not ``json.dumps``, which was the largest cost of the MCP layer per
        call."""
        model = isinstance(raw, BaseModel)
        result = raw.model_dump(mode="json") if model else dict(raw)
        if tool.data_sources:
            # Cached ten minutes, the times and the advisory built from them: no session per call.
            advisory = await answer_advisory(self.registry, context.sessions, tool.data_sources)
            result["advisory"] = advisory.value
        text, object_json = "", None
        if with_text and model:
            written, reusable = written_json(result)
            text, object_json = written.decode(), written if reusable else None
        elif with_text:
            text = _answer_text(result)
        links: Sequence[PageLink] = ()
        if tool.page_links is not None:
            try:
                links = await tool.page_links(context, result)
            except Exception:
                # A link is extra (seed 000): report it, answer without links.
                log.exception("page links of %s failed", tool.name)
        return result, text, links, object_json

    # prompts -------------------------------------------------------------------------------

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        await self.offers.refresh(self.sessions)
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=prompt.name,
                    title=prompt.title,
                    description=prompt.description,
                    arguments=[
                        types.PromptArgument(name=a.name, description=a.description, required=a.required)
                        for a in prompt.arguments
                    ],
                    icons=self.icons.of(prompt.plugin, inline=self.inline_icons),
                )
                for prompt in self.listed_prompts()
            ]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        await self.offers.refresh(self.sessions)
        prompt = self.prompts.get(params.name)
        if prompt is None or prompt not in self.listed_prompts():
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown prompt {quote_input(params.name)}. Call prompts/list to see the prompts.",
            )
        raw = params.arguments or {}
        if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
            raise MCPError(types.INVALID_PARAMS, "Prompt arguments must be an object of strings.")
        known = {a.name for a in prompt.arguments}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown argument(s) {', '.join(unknown)} for {prompt.name}; it takes: {', '.join(sorted(known)) or 'none'}.",
            )
        args = {k: v[:PROMPT_ARGUMENT_LIMIT] for k, v in raw.items() if v.strip()}
        if prompt.render_in_context is not None:
            context = self.tool_context(ctx, current_principal.get(), prompt.plugin)
            text = await prompt.render_in_context(context, args)
        else:
            assert prompt.render is not None  # the registry holds exactly one of the two
            rendered = prompt.render(args)
            text = rendered if isinstance(rendered, str) else await rendered
        return types.GetPromptResult(
            description=prompt.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    # resources -----------------------------------------------------------------------------

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # The campus:// resources are listed as templates only (resources/templates/list), even
        # campus://terms: one list of what a student can mention, whatever its variables.
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=app.uri,
                    name=app.name,
                    title=app.title,
                    description=app.description,
                    mime_type=APP_MIME_TYPE,
                    icons=self.icons.of(app.plugin, inline=self.inline_icons),
                )
                for app in self.app_resources.values()
            ]
        )

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=self.resources.templates(inline_icons=self.inline_icons)
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri.startswith("campus://"):
            return await self.read_campus_resource(ctx, uri)
        app = self.app_resources.get(uri)
        if app is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown resource {quote_input(uri)}. Call resources/list to see the resources.",
            )
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=app.uri,
                    mime_type=APP_MIME_TYPE,
                    text=app.html(),
                    # No network loads: the host applies its strictest CSP (seed 000 "Apps").
                    _meta={"ui": {"csp": {}, "prefersBorder": True}},
                )
            ]
        )

    async def read_campus_resource(self, ctx: ServerRequestContext[Any, Any], uri: str) -> types.ReadResourceResult:
        """A ``campus://`` resource: its tool's answer, through the same checks as a call of it."""
        found = self.resources.find(uri)
        if found is None:
            raise self.resources.unknown(uri)
        tool = found.served.tool
        context = self.tool_context(ctx, current_principal.get(), tool.plugin)
        try:
            _result, text, _links, _object_json = await self.run_tool(tool, found.arguments, context)
        except RateLimited as exc:
            raise MCPError(types.INVALID_REQUEST, exc.refusal.tool_message) from None
        except CampusError as exc:
            raise read_error(exc, found.arguments) from None
        except Exception as exc:
            if database_unreachable(exc):
                log.warning("resource %s: the database cannot be reached (%s)", tool.name, type(exc).__name__)
                raise MCPError(types.INTERNAL_ERROR, DATABASE_UNREACHABLE_TOOL_TEXT.format(tool=tool.name)) from None
            log.exception("resource of %s failed", tool.name)
            raise MCPError(
                types.INTERNAL_ERROR, f"Reading {uri} failed on the server. The error was logged; try again later."
            ) from None
        return read_result(uri, text, private=found.served.private)

    # completions ---------------------------------------------------------------------------

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        completion = self._completer_of(params)
        values: list[str] = []
        if completion is not None:
            context_args: dict[str, str] = {}
            raw_context = getattr(params, "context", None)
            raw_args = getattr(raw_context, "arguments", None) if raw_context is not None else None
            if isinstance(raw_args, Mapping):
                context_args = {str(k): str(v) for k, v in raw_args.items() if isinstance(v, str)}
            async with self.sessions() as session:
                values = list(await completion.complete(session, params.argument.value, context_args))
        # A completer reads at most 101 rows, so its count is only a total when nothing was cut.
        more = len(values) > COMPLETION_LIMIT
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:COMPLETION_LIMIT], total=None if more else len(values), has_more=more
            )
        )

    def _completer_of(self, params: types.CompleteRequestParams) -> Completion | None:
        """The completer the referenced prompt names for the argument: a completer whose prompt is
        not enabled is registered but unused, so a deployment completes nothing it cannot use."""
        ref = params.ref
        if isinstance(ref, types.ResourceTemplateReference):
            return self.resources.completer(ref, params.argument.name)
        if not isinstance(ref, types.PromptReference):
            return None
        prompt = self.prompts.get(ref.name)
        if prompt is None:
            return None
        for argument in prompt.arguments:
            if argument.name == params.argument.name and argument.completer:
                return self.registry.completions.get(argument.completer)
        return None
