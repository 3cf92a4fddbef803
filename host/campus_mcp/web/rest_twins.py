"""The REST twin of an operation: a Litestar route made from the same ``Operation`` as its tool.

``operation_routes(OPERATIONS)`` (public as ``campus_mcp.operation_routes``) goes to a plugin's
``register_routes``. Each route validates the path parameters and the query string (a JSON body
for POST, PUT and PATCH) with the tool's ``input_model``, builds the same :class:`ToolContext` an
MCP call gets, and makes the identical call (:mod:`campus_mcp.plugin.operations`), so the two
doors cannot drift apart.

This module has no ``from __future__ import annotations`` on purpose: Litestar reads the generated
handlers' annotations, so they must be the real classes, not strings naming closure variables.
"""

import json
from collections.abc import Sequence
from typing import Any

from litestar import Request, route
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from pydantic import ValidationError

from campus_mcp.assembly.access import always_on_scopes, check_call, may_call
from campus_mcp.base import metrics
from campus_mcp.plugin.contributions import Tool
from campus_mcp.plugin.errors import InvalidInput, PermissionMissing, SignInNeeded
from campus_mcp.plugin.operations import PATH_PARAMETER, Operation
from campus_mcp.students.access_log import touches_student_data
from campus_mcp.web.openapi import ERROR_RESPONSES, OPERATION_OPT, base_security, operation_class

# Query string: GET and DELETE; a JSON object in the body: the others.
_QUERY_METHODS = frozenset({"GET", "DELETE"})


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
    return PATH_PARAMETER.sub(lambda match: "{" + match.group(1) + ":str}", path)


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
    rule and permission text (``campus_mcp.assembly.access.check_call``, a 403; an anonymous caller is
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
            context = registry.tool_context(
                principal, deployment.sessions, tool.plugin, plugin_settings=plugin_settings
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
            # The access log of student data (campus_mcp.students.access_log): queued, never awaited.
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
        # The OpenAPI document (campus_mcp.web.openapi): the app leaves every other route out of it.
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
