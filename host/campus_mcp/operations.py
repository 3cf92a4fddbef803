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
naming the field (``campus_mcp.route_errors``).

This module has no ``from __future__ import annotations`` on purpose: Litestar reads the generated
handlers' annotations, so they must be the real classes, not strings naming closure variables.
"""

import dataclasses
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from litestar import Request, route
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from pydantic import BaseModel, ValidationError

from campus_mcp import metrics
from campus_mcp.access import always_on_scopes, check_call, may_call
from campus_mcp.answer_cache import AnswerCache, cached_call
from campus_mcp.confirmation import Planner
from campus_mcp.contributions import HttpMethod, PageLinker, RouteRef, Tool, ToolExample
from campus_mcp.errors import InvalidInput, PermissionMissing, SignInNeeded
from campus_mcp.openapi import ERROR_RESPONSES, OPERATION_OPT, base_security, operation_class
from campus_mcp.settings import Settings
from campus_mcp.student_access import touches_student_data
from campus_mcp.tool_context import ToolContext

# Query string: GET and DELETE; a JSON object in the body: the others.
_QUERY_METHODS = frozenset({"GET", "DELETE"})
_PATH_PARAMETER = re.compile(r"\{([^}:]+)(?::[^}]+)?\}")

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
    # A write operation's plan (campus_mcp.confirmation): the MCP tool asks the student first.
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
                "PlannedChange | None, so the host asks the student before the change (campus_mcp.confirmation)"
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
        return tuple(_PATH_PARAMETER.findall(self.path or ""))

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
            answer = await cached_call(self, self.cache, context, args)
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


def _query_arguments(request: Request[Any, Any, Any]) -> dict[str, Any]:
    # A repeated key (?crns=1&crns=2) becomes a list, a single one stays a string: the model decides.
    raw: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getall(key)
        raw[key] = values if len(values) > 1 else values[0]
    return raw


async def _body_arguments(request: Request[Any, Any, Any], operation: Operation) -> dict[str, Any]:
    body = await request.body()
    if not body.strip():
        return {}
    try:
        raw = json.loads(body)
    except ValueError:
        raw = None
    if not isinstance(raw, dict):
        raise InvalidInput(
            f"The body of {operation.method} {operation.path} must be a JSON object of the arguments of "
            f"{operation.name} (for example {{}}). Send the arguments as one JSON object."
        )
    return raw


def _litestar_path(path: str) -> str:
    # ``{crn}`` -> ``{crn:str}``: the model, not Litestar, converts and checks the value.
    return _PATH_PARAMETER.sub(lambda match: "{" + match.group(1) + ":str}", path)


def _check_scope(registry: Any, principal: Any, tool: Tool) -> None:
    """The tool's scope rule on its REST twin. A signed-in caller without the scope gets the
    tool's own permission text (403); an anonymous one is told to sign in (401: it sent no
    credentials, and has no app to fix)."""
    if principal.is_anonymous and not may_call(registry, principal, tool):
        metrics.count_scope_denial(tool.name, tool.scope)
        raise SignInNeeded(
            f"{tool.name} needs the permission {tool.scope!r}, which only a signed-in student holds. "
            f"Sign in on the dashboard ({registry.settings.base_url}/login) and ask again, or use an app "
            "connected with a campus account.",
            scope=tool.scope,
        )
    try:
        check_call(registry, principal, tool)
    except PermissionMissing as exc:
        metrics.count_scope_denial(tool.name, exc.scope)  # as on MCP (CampusServer.call_tool)
        raise


def operation_route(operation: Operation) -> HTTPRouteHandler:
    """The REST twin of one operation (see :func:`operation_routes`).

    It refuses what its tool refuses: the caller's scopes are checked first, with the tool's own
    rule and permission text (``campus_mcp.access.check_call``, a 403; an anonymous caller is
    told to sign in instead, a 401). Today a REST request carries one of two principals: anonymous
    (only the always-on public scopes, like an MCP caller with no token), or the student signed
    in to the dashboard, who holds every scope of every family: it is the student themselves on
    the first-party site, not an app acting for them, so there is nothing to consent to. A
    principal with granted scopes (a bearer token, a personal access token) is held to those.
    """
    if operation.path is None:
        raise ValueError(f"operation {operation.name!r} has no path, so it has no REST twin")

    door = f"{operation.method} {operation.path}"

    # ``principal``, ``deployment`` and ``plugin_settings`` are the host's route dependencies
    # (app.py). Typed Any so that Litestar passes them through instead of converting them.
    async def handler(
        request: Request[Any, Any, Any],
        principal: NamedDependency[Any],
        deployment: NamedDependency[Any],
        plugin_settings: NamedDependency[Any],
    ) -> Any:
        registry = deployment.registry
        # The registered tool (a plugin may register the route without the tool: then its own).
        tool = registry.tools.get(operation.name) or operation.tool(deployment.settings, plugin_settings)
        access_log = deployment.access_log
        recorded = access_log is not None and touches_student_data(principal, tool.scope, always_on_scopes(registry))
        outcome = "error"
        try:
            _check_scope(registry, principal, tool)
            if operation.method in _QUERY_METHODS:
                raw = _query_arguments(request)
            else:
                raw = await _body_arguments(request, operation)
            raw.update(request.path_params)
            args = operation.input_model.model_validate(raw)
            context = ToolContext(
                principal=principal,
                settings=deployment.settings,
                registry=deployment.registry,
                sessions=deployment.sessions,
                plugin_settings=plugin_settings,
            )
            answer = await operation.call(context, args)
            outcome = "ok"
            return answer
        except PermissionMissing:
            outcome = "denied"
            raise
        except (InvalidInput, ValidationError):
            outcome = "invalid_arguments"
            raise
        finally:
            # The access log of student data (campus_mcp.student_access): queued, never awaited.
            if recorded and access_log is not None:
                access_log.record_call(principal, door=door, action=operation.name, outcome=outcome)

    handler.__annotations__["return"] = operation.output_model
    handler.__name__ = handler.__qualname__ = operation.name
    handler.__doc__ = operation.title
    status = 201 if operation.method == "POST" and operation.writes else 200
    decorator = route(
        _litestar_path(operation.path),
        http_method=operation.method,
        status_code=status,
        opt={OPERATION_OPT: operation.name},
        # The OpenAPI document (campus_mcp.openapi): the app leaves every other route out of it.
        include_in_schema=True,
        # One operation may have several routes (a DELETE beside its PUT, a second path).
        operation_id="_".join(
            [
                operation.name,
                operation.method.lower(),
                *(["by", *operation.path_parameters] if operation.path_parameters else []),
            ]
        ),
        summary=operation.title,
        # A description in campus words needs the settings: the document then has the summary only.
        description=operation.description if isinstance(operation.description, str) else None,
        tags=[operation.scope],
        security=base_security(operation.scope),
        responses=ERROR_RESPONSES,
        operation_class=operation_class(operation.input_model, operation.method, operation.path_parameters),
    )
    return decorator(handler)


def operation_routes(operations: Sequence[Operation]) -> list[HTTPRouteHandler]:
    """The Litestar handlers of the REST twins of ``operations`` (those with a path), for a
    :class:`~campus_mcp.RouteGroup`. Each answers exactly what the operation's tool answers."""
    return [operation_route(operation) for operation in operations if operation.path is not None]
