"""The OpenAPI document of the REST API (``/api/v1/openapi.json``) and its documentation page.

Litestar generates the document from the handlers ``operations.operation_route`` makes: the
answer schemas come from each Operation's ``output_model``. The generated handlers read their
arguments themselves (so that both doors validate with the same pydantic model and answer the
same 400), so Litestar cannot see them: :func:`operation_class` gives each route an OpenAPI
operation whose parameters (GET, DELETE) or JSON body (POST, PUT, PATCH) are the Operation's
``input_model``, with the field descriptions the MCP tool's ``inputSchema`` carries.

Only the REST API is in the document: the app leaves every route out (``include_in_schema=False``
on the app) and an Operation's route puts itself back in; pages, OAuth and ``/api/mcp`` stay out.

Security, as the server does it: a route's Operation scope is a permission of the student's
personal access token (the ``personal_token`` bearer scheme, ``cmcp_pat_…``, made on the
dashboard's Access tokens page); the student's own dashboard session (the ``campus_session``
cookie) holds every scope; a route of an always-on scope may be called by anyone (an empty
requirement, :func:`with_access`). No OAuth flow is declared: an app's OAuth access token is bound
to the MCP resource ``/api/mcp`` (RFC 8707, docs/sign-in.md), and REST answers it with the 401
declared here (``oauth/personal_tokens.rest_token_middleware_factory``).

The page at ``/api/v1/docs`` is rendered here from the document, with no script: every bundled
UI of Litestar 2.25 (Swagger, ReDoc, RapiDoc, Elements, Scalar) loads its code from a CDN, and a
campus server may have no way out.
"""

from __future__ import annotations

import copy
import dataclasses
import html
from collections.abc import Mapping
from typing import Any

from litestar import Request, Router
from litestar._openapi.plugin import handle_schema_path_not_found
from litestar.enums import MediaType
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin
from litestar.openapi.spec import (
    Components,
    Parameter,
    RequestBody,
    SecurityScheme,
)
from litestar.openapi.spec import OpenAPIMediaType as SpecMediaType
from litestar.openapi.spec import Operation as OpenAPIOperation
from litestar.routes import HTTPRoute
from litestar.types import ControllerRouterHandler
from pydantic import BaseModel, Field

from campus_mcp.assembly.access import TOKENS_PAGE
from campus_mcp.assembly.registry import Registry
from campus_mcp.oauth.personal_tokens import REST_API_PATH
from campus_mcp.oauth.session import SESSION_COOKIE
from campus_mcp.version import __version__

OPENAPI_PATH = REST_API_PATH
OPENAPI_JSON = f"{OPENAPI_PATH}/openapi.json"
TOKEN_SCHEME = "personal_token"  # noqa: S105 - a security scheme's name
SESSION_SCHEME = "dashboard_session"
# An operation's route carries this opt (operations.operation_route): its name.
OPERATION_OPT = "campus_operation"
_QUERY_METHODS = frozenset({"GET", "DELETE"})
_BODY_SCHEMA_KEYS = ("title", "description")


class FieldProblemOut(BaseModel):
    field: str | None = Field(description="The argument that broke a rule; null when the rule is about several.")
    rule: str = Field(description="The rule it broke (pydantic's error type, e.g. 'string_too_long').")
    message: str = Field(description="What was wrong, in words.")


class ErrorAnswer(BaseModel):
    """What every refused request answers (``app.campus_error_handler``, ``route_errors``)."""

    error: str = Field(description="The kind of error: InvalidInput, PermissionMissing, NotFound ...")
    message: str = Field(description="What was wrong and what to do, for a person and for a model.")
    field: str | None = Field(default=None, description="The first argument the error is about, if any.")
    fields: list[FieldProblemOut] | None = Field(default=None, description="Each argument that broke a rule (400).")


class BearerRefusal(BaseModel):
    """What a refused bearer token answers (401, with ``WWW-Authenticate: Bearer error="invalid_token"``)."""

    error: str = Field(description="Always 'invalid_token' (RFC 6750).")
    error_description: str = Field(description="Why the token was refused and what to use instead.")


ERROR_RESPONSES: dict[int, ResponseSpec] = {
    401: ResponseSpec(
        BearerRefusal | ErrorAnswer,  # type: ignore[arg-type]
        description=(
            "The bearer token is not a live personal access token: unknown, expired or revoked, or an "
            "OAuth access token (those work on the MCP server only). Leave the header out on a public route. "
            "Or no credentials at all on a route that needs a student: sign in, or send a personal access token."
        ),
    ),
    400: ResponseSpec(ErrorAnswer, description="An argument breaks a rule: the answer names the field and the rule."),
    403: ResponseSpec(ErrorAnswer, description="The signed-in caller or the token lacks the route's scope."),
    404: ResponseSpec(ErrorAnswer, description="What the arguments name does not exist."),
    429: ResponseSpec(ErrorAnswer, description="Too many requests (campus_mcp.limits): wait Retry-After seconds."),
}


def base_security(scope: str) -> list[dict[str, list[str]]]:
    """A route of ``scope``: a personal access token with the scope, or the student's dashboard session."""
    return [{TOKEN_SCHEME: [scope]}, {SESSION_SCHEME: []}]


def with_access(handler: ControllerRouterHandler, registry: Registry) -> ControllerRouterHandler:
    """``handler`` as this deployment documents it: a route of an always-on scope needs no sign-in.

    Only the registry knows which scopes are always on, and the plugins make their routes
    before there is one; so the host's router gets a copy with the anonymous requirement first.
    """
    # A plugin's route group may hold a Controller class or a Router as well as route handlers: only
    # a handler made from an Operation is documented here (a Controller's ``opt`` is a slot descriptor).
    if not isinstance(handler, HTTPRouteHandler) or OPERATION_OPT not in handler.opt or not handler.security:
        return handler
    scope = next(iter(handler.security[0].get(TOKEN_SCHEME, [])), None)
    known = registry.scopes.get(scope) if scope is not None else None
    if known is None or not known.always_on:
        return handler
    documented = copy.copy(handler)
    documented.security = [{}, *handler.security]
    return documented


def _inline(schema: Any, defs: Mapping[str, Any], trail: tuple[str, ...] = ()) -> Any:
    """``schema`` with its ``$ref``s to ``$defs`` replaced by the definitions themselves.

    A parameter's schema stands alone in the document (a ``#/$defs/...`` reference would point
    at the document's root). An input model that contains itself cannot be inlined: refused.
    """
    if isinstance(schema, list):
        return [_inline(item, defs, trail) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in trail:
            raise ValueError(f"the input model contains itself through {name}: a REST argument cannot be recursive")
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return {**_inline(defs[name], defs, (*trail, name)), **_inline(rest, defs, trail)}
    return {key: _inline(value, defs, trail) for key, value in schema.items() if key != "$defs"}


def input_schema(model: type[BaseModel], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON schema of ``model`` (the tool's own, descriptions included), self-contained."""
    raw = model.model_json_schema()
    schema: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    if leave_out:
        schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in leave_out}
        schema["required"] = [name for name in schema.get("required", []) if name not in leave_out]
        if not schema["required"]:
            del schema["required"]
    return schema


def _parameters(model: type[BaseModel], method: str, path_parameters: tuple[str, ...]) -> list[Parameter]:
    schema = input_schema(model)
    required = set(schema.get("required", []))
    parameters: list[Parameter] = []
    for name, prop in schema.get("properties", {}).items():
        where = "path" if name in path_parameters else "query"
        if where == "query" and method not in _QUERY_METHODS:
            continue  # in the JSON body instead
        parameters.append(
            Parameter(
                name=name,
                param_in=where,
                required=where == "path" or name in required,
                description=str(prop.get("description") or ""),
                schema=prop,  # type: ignore[arg-type]  # JSON Schema: OpenAPI 3.1 takes it as is
            )
        )
    return parameters


def _request_body(model: type[BaseModel], path_parameters: tuple[str, ...]) -> RequestBody:
    schema = input_schema(model, leave_out=path_parameters)
    # The model's docstring speaks to the plugin's authors; the document speaks to callers.
    schema.pop("description", None)
    return RequestBody(
        content={MediaType.JSON.value: SpecMediaType(schema=schema)},  # type: ignore[arg-type]
        description="The arguments as one JSON object: the fields below (path parameters stay in the path).",
        required=bool(schema.get("required")),
    )


def operation_class(
    input_model: type[BaseModel], method: str, path_parameters: tuple[str, ...]
) -> type[OpenAPIOperation]:
    """The OpenAPI operation of one generated route: Litestar's, with the arguments the handler reads."""
    parameters = _parameters(input_model, method, path_parameters)
    request_body = None if method in _QUERY_METHODS else _request_body(input_model, path_parameters)

    @dataclasses.dataclass
    class CampusOperation(OpenAPIOperation):
        def __post_init__(self) -> None:
            self.parameters = list(parameters) or None  # type: ignore[assignment]
            self.request_body = request_body

    CampusOperation.__name__ = CampusOperation.__qualname__ = f"{input_model.__name__}Operation"
    return CampusOperation


def openapi_config(registry: Registry) -> OpenAPIConfig:
    """The OpenAPI configuration of one deployment: its name, its scopes, its sign-in URLs."""
    settings = registry.settings
    base = settings.base_url
    tokens_page = f"{base}{TOKENS_PAGE}"
    scopes = "; ".join(
        f"`{name}`{' (always on: every token holds it, and its routes answer anyone)' if scope.always_on else ''}: "
        f"{scope.description}"
        for name, scope in sorted(registry.scopes.items())
    )
    return OpenAPIConfig(
        title=f"{settings.product_name} REST API",
        version=__version__,
        description=(
            "The REST twins of the MCP tools: each route makes the same call as its tool, with the same "
            "arguments and answer. Routes of a public scope answer anyone; the others need the student's "
            f"personal access token with the route's scope (made on the dashboard's Access tokens page, "
            f"{tokens_page}), or the student signed in on {base}/dashboard. The MCP server itself is at "
            f"{settings.mcp_url}; an app's OAuth access token works there, not here."
        ),
        path=OPENAPI_PATH,
        # The page first: it is also what /api/v1 itself shows.
        render_plugins=[OperationsPage(path="/docs"), JsonRenderPlugin(path="/openapi.json")],
        components=Components(
            security_schemes={
                TOKEN_SCHEME: SecurityScheme(
                    type="http",
                    scheme="bearer",
                    bearer_format="cmcp_pat_<id>_<secret>",
                    description=(
                        "A personal access token (cmcp_pat_...) as `Authorization: Bearer <token>`: the student "
                        f"makes one on the dashboard's Access tokens page ({tokens_page}), checking the "
                        "permissions it carries, and a route needs the scope its requirement names (a token "
                        "without it gets the 403). An app's OAuth access token is bound to the MCP server "
                        f"({settings.mcp_url}) and gets the 401 here. The scopes: {scopes}."
                    ),
                ),
                SESSION_SCHEME: SecurityScheme(
                    type="apiKey",
                    name=SESSION_COOKIE,
                    security_scheme_in="cookie",
                    description="The student signed in on the dashboard: every scope, it is the student themselves.",
                ),
            }
        ),
        use_handler_docstrings=False,
    )


def _is_schema_not_found(fn: object) -> bool:
    return fn is handle_schema_path_not_found


class OperationsPage(OpenAPIRenderPlugin):
    """The documentation page: each route, what it answers, its arguments and its scope, as HTML."""

    def receive_router(self, router: Router) -> None:
        # Litestar's schema router answers any other GET /api/v1/<name> with an HTML 404 page; an
        # API client there should get the JSON 404 every other unknown API path gets.
        router.routes = [
            route
            for route in router.routes
            if not (
                isinstance(route, HTTPRoute)
                and any(_is_schema_not_found(handler.fn) for handler in route.route_handlers)
            )
        ]

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        info = openapi_schema.get("info", {})
        sections = []
        for path, item in sorted(openapi_schema.get("paths", {}).items()):
            for method, operation in item.items():
                if isinstance(operation, dict) and "responses" in operation:
                    sections.append(_operation_html(method.upper(), path, operation))
        title = html.escape(str(info.get("title", "REST API")))
        page = (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{title}</title><link rel='stylesheet' href='/assets/campus.css'></head><body><main>"
            f"<h1>{title}</h1><p>{html.escape(str(info.get('description', '')))}</p>"
            f"<p>The machine-readable document: <a href='{OPENAPI_JSON}'>{OPENAPI_JSON}</a> (OpenAPI "
            f"{html.escape(str(openapi_schema.get('openapi', '')))}).</p>{''.join(sections)}</main></body></html>"
        )
        return page.encode()


def _operation_html(method: str, path: str, operation: Mapping[str, Any]) -> str:
    rows = []
    for parameter in operation.get("parameters", []):
        kind = parameter.get("schema", {}).get("type", "")
        rows.append(
            f"<tr><td><code>{html.escape(parameter['name'])}</code></td><td>{html.escape(parameter['in'])}</td>"
            f"<td>{html.escape(str(kind))}</td><td>{'yes' if parameter.get('required') else 'no'}</td>"
            f"<td>{html.escape(parameter.get('description', ''))}</td></tr>"
        )
    body = operation.get("requestBody", {}).get("content", {}).get(MediaType.JSON.value, {}).get("schema", {})
    for name, prop in body.get("properties", {}).items():
        rows.append(
            f"<tr><td><code>{html.escape(name)}</code></td><td>body</td><td>{html.escape(str(prop.get('type', '')))}</td>"
            f"<td>{'yes' if name in body.get('required', []) else 'no'}</td>"
            f"<td>{html.escape(str(prop.get('description', '')))}</td></tr>"
        )
    scopes = sorted({s for requirement in operation.get("security", []) for s in requirement.get(TOKEN_SCHEME, [])})
    public = any(not requirement for requirement in operation.get("security", []))
    access = "anyone" if public else "a personal access token or the signed-in student"
    table = (
        "<table><thead><tr><th>Argument</th><th>In</th><th>Type</th><th>Required</th><th>What it is</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else "<p>No arguments.</p>"
    )
    anchor = html.escape(str(operation.get("operationId", "")))
    return (
        f"<section id='{anchor}'><h2><code>{method} {html.escape(path)}</code>: "
        f"{html.escape(str(operation.get('summary', '')))}</h2>"
        f"<p>{html.escape(str(operation.get('description', '')))}</p>"
        f"<p>Scope: <code>{html.escape(', '.join(scopes))}</code>; who may call it: {access}.</p>{table}</section>"
    )
