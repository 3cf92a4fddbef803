"""One declaration per operation: the MCP tool and its REST twin made from the same ``Operation``.

A plugin that serves the same question through a tool and a route declares it once::

    Operation(name="list_dining_halls", title=..., description=..., scope="dining",
              input_model=HallQuery, output_model=DiningHallList, run=list_dining_halls,
              method="GET", path="/api/v1/dining/halls")

and hands ``operation_tools(OPERATIONS)`` to ``register_tools`` and ``operation_routes(OPERATIONS)``
to ``register_routes``. The route is generated: it validates the path parameters and the query
string (a JSON body for POST, PUT and PATCH) with the tool's ``input_model``, builds the same
:class:`ToolContext` an MCP call gets (principal, settings, plugin settings, sessions), and makes
the identical call, so the two doors cannot drift apart. A value that breaks a rule of the model
escapes as pydantic's ``ValidationError``, which the host answers for every plugin route as a 400
naming the field (``campus_mcp.plugin.route_errors``).

This module has no ``from __future__ import annotations`` on purpose: Litestar reads the generated
handlers' annotations, so they must be the real classes, not strings naming closure variables.
"""

import dataclasses
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from campus_mcp.base.settings import Settings
from campus_mcp.plugin.answer_cache import AnswerCache, cached_call
from campus_mcp.plugin.contributions import HttpMethod, PageLinker, Planner, RouteRef, Tool, ToolExample
from campus_mcp.plugin.tool_context import ToolContext

PATH_PARAMETER = re.compile(r"\{([^}:]+)(?::[^}]+)?\}")

Run = Callable[[ToolContext, Any], Awaitable[BaseModel]]
AfterAnswer = Callable[[ToolContext, Any], Awaitable[object]]
# A description that needs campus words: (host settings, the plugin's own settings) -> text.
DescriptionText = str | Callable[[Settings, Any], str]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Operation:
    """One operation of a plugin: its tool, its REST twin and its examples, declared once.

    ``run`` is ``async (context, args) -> answer``, one call to the query function. ``after``
    sees the answer once it is built (e.g. to queue a background refresh); it must not change it.
    ``path`` is the REST twin's path; its ``{parameters}`` are fields of ``input_model``. Without
    a path the operation is a tool only and ``no_route_reason`` says why (the parity check asks).
    ``examples`` are the contract's calls of the tool; leave their ``tool`` empty (it is ``name``).
    """

    name: str
    title: str
    description: DescriptionText
    scope: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    run: Run
    method: HttpMethod = "GET"
    path: str | None = None
    no_route_reason: str = ""
    data_sources: tuple[str, ...] = ()
    after: AfterAnswer | None = None
    examples: tuple[ToolExample, ...] = ()
    writes: bool = False
    idempotent: bool = False
    open_world: bool = False
    app_resource: str | None = None
    page_links: PageLinker | None = None
    output_schema_override: Mapping[str, Any] | None = None
    # A write operation's plan (campus_mcp.plugin.confirmation): the MCP tool asks the student first.
    plan: Planner | None = None
    # A public answer kept and handed out again while what it depends on is unchanged
    # (campus_mcp.AnswerCache); never for a student's own answer.
    cache: AnswerCache | None = None

    def __post_init__(self) -> None:
        # Checked when the plugin is imported, so a slip is a start-up error naming the operation.
        if self.cache is not None and self.writes:
            raise ValueError(f"operation {self.name!r} writes, so its answer cannot be cached: leave out cache=")
        if self.writes and self.plan is None:
            raise ValueError(
                f"operation {self.name!r} writes, so it needs a plan: give plan=async (context, args) -> "
                "PlannedChange | None, so the host asks the student before the change (campus_mcp.plugin.confirmation)"
            )
        if self.path is None:
            if not self.no_route_reason.strip():
                raise ValueError(
                    f"operation {self.name!r} has no path: give the REST twin's path, or say in "
                    "no_route_reason why it has none"
                )
        else:
            if not self.path.startswith("/"):
                raise ValueError(f"operation {self.name!r}: its path {self.path!r} must start with '/'")
            missing = [p for p in self.path_parameters if p not in self.input_model.model_fields]
            if missing:
                raise ValueError(
                    f"operation {self.name!r}: the path parameter(s) {', '.join(missing)} of {self.path} are not "
                    f"fields of {self.input_model.__name__}; name each path parameter after the field it fills"
                )
        for example in self.examples:
            if example.tool not in ("", self.name):
                raise ValueError(
                    f"operation {self.name!r} has an example of the tool {example.tool!r}; leave its tool empty"
                )

    @property
    def path_parameters(self) -> tuple[str, ...]:
        return tuple(PATH_PARAMETER.findall(self.path or ""))

    def describe(self, settings: Settings | None, plugin_settings: Any = None) -> str:
        if isinstance(self.description, str):
            return self.description
        if settings is None:
            raise ValueError(
                f"operation {self.name!r} builds its description from the settings: call "
                "operation_tools(operations, settings=settings, plugin_settings=plugin_settings)"
            )
        return self.description(settings, plugin_settings)

    async def call(self, context: ToolContext, args: Any) -> BaseModel:
        """What both doors run: ``run``, then ``after`` with the answer."""
        if self.cache is None:
            answer = await self.run(context, args)
        else:
            answer = await cached_call(
                self.cache, context, args, name=self.name, output_model=self.output_model, run=self.run
            )
        if self.after is not None:
            await self.after(context, answer)
        return answer

    def tool(self, settings: Settings | None = None, plugin_settings: Any = None) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.describe(settings, plugin_settings),
            scope=self.scope,
            input_model=self.input_model,
            output_model=self.output_model,
            handler=self.call,
            mirrors=(RouteRef(method=self.method, path=self.path),) if self.path is not None else (),
            no_route_reason=self.no_route_reason,
            writes=self.writes,
            idempotent=self.idempotent,
            open_world=self.open_world,
            data_sources=self.data_sources,
            app_resource=self.app_resource,
            page_links=self.page_links,
            output_schema_override=self.output_schema_override,
            plan=self.plan,
        )


def operation_tools(
    operations: Sequence[Operation], *, settings: Settings | None = None, plugin_settings: Any = None
) -> list[Tool]:
    """The MCP tools of ``operations``, each mirroring its REST twin (``Tool.mirrors``).

    ``settings`` and ``plugin_settings`` are needed when a description is a callable (campus words).
    """
    return [operation.tool(settings, plugin_settings) for operation in operations]


def operation_examples(operations: Sequence[Operation]) -> list[ToolExample]:
    """The examples of ``operations`` for ``register_tool_examples``, each naming its tool."""
    return [
        dataclasses.replace(example, tool=operation.name) for operation in operations for example in operation.examples
    ]
