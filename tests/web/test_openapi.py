"""The REST API's OpenAPI document (``/api/v1/openapi.json``) and its page (``/api/v1/docs``),
on the demo campus with every installed family (issue 14 point 4).

What a client reads there: only the REST twins of the operations (no pages, no OAuth, no
``/api/mcp``), each with a summary, each argument described in the words of the MCP tool's own
``inputSchema``, and each with the scope its personal access token needs (none for an always-on scope).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest_asyncio
from campus_mcp.assembly.registry import load_registry
from campus_mcp.mcp.server import input_schema
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app
from campus_mcp.testing import test_settings as campus_settings

METHODS = ("get", "put", "post", "delete", "patch")


@dataclasses.dataclass(frozen=True)
class Served:
    campus: CampusHarness
    document: dict[str, Any]
    page: httpx.Response
    unknown: httpx.Response


@pytest_asyncio.fixture(scope="module")
async def served(campus_databases: TestDatabases) -> AsyncIterator[Served]:
    """One app with every installed family, asked once for what this module reads (no data needed)."""
    url = await campus_databases.empty()
    registry = load_registry(campus_settings(url))
    campus = CampusHarness(app=harness_app(registry), registry=registry)
    async with campus.rest() as client:
        response = await client.get("/api/v1/openapi.json")
        page = await client.get("/api/v1/docs")
        unknown = await client.get("/api/v1/no-such-route")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/vnd.oai.openapi+json")
    yield Served(campus=campus, document=response.json(), page=page, unknown=unknown)
    await campus.close()
    await campus_databases.drop(url)


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def _operation_routes(campus: CampusHarness) -> dict[tuple[str, str], str]:
    """(method, path) -> operation name of every REST twin the registry's families register."""
    routes: dict[tuple[str, str], str] = {}
    for group in campus.registry.route_groups:
        for handler in group.handlers:
            name = handler.opt.get("campus_operation")
            if name is None:
                continue
            for path in handler.paths:
                for method in handler.http_methods:
                    routes[(method, re.sub(r":[^}]+\}", "}", path))] = str(name)
    return routes


async def test_the_document_holds_every_rest_route_and_nothing_else(served: Served) -> None:
    document, campus = served.document, served.campus
    listed = {(method, path) for method, path, _ in _operations(document)}
    expected = _operation_routes(campus)
    assert set(campus.registry.plugins) >= {"catalog", "schedule", "friends", "settings"}
    assert listed == set(expected), f"missing: {set(expected) - listed}; not REST: {listed - set(expected)}"
    for _, path, _ in _operations(document):
        assert not path.startswith(("/api/mcp", "/api/oauth", "/dashboard", "/login", "/.well-known", "/healthz"))


async def test_every_route_has_a_summary_and_every_argument_the_tools_description(
    served: Served,
) -> None:
    document, campus = served.document, served.campus
    names = _operation_routes(campus)
    undocumented: list[str] = []
    for method, path, operation in _operations(document):
        where = f"{method} {path}"
        if not str(operation.get("summary", "")).strip():
            undocumented.append(f"{where}: no summary")
        tool = campus.registry.tools.get(names[(method, path)])
        # A second route of a tool (a path of its own) may take its own model; the tool's own route
        # takes the tool's.
        own_route = tool is not None and (tool.mirrors[0].method, tool.mirrors[0].path) == (method, path)
        tool_fields = input_schema(tool)["properties"] if tool is not None and own_route else {}
        arguments = [(p["name"], p.get("description", "")) for p in operation.get("parameters", [])]
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        arguments += [(name, prop.get("description", "")) for name, prop in body.get("properties", {}).items()]
        for name, description in arguments:
            if not str(description).strip():
                undocumented.append(f"{where}: the argument {name!r} has no description")
            elif name in tool_fields:
                # The same words an MCP client reads in the tool's inputSchema.
                assert description == tool_fields[name].get("description"), f"{where} {name}"
    assert not undocumented, "\n".join(undocumented)
    # Two methods of one path do different things: their summaries say which (a reset is no change).
    for path, item in document["paths"].items():
        summaries = [operation["summary"] for method, operation in item.items() if method in METHODS]
        assert len(set(summaries)) == len(summaries), f"{path}: {summaries}"


async def test_each_route_needs_its_tools_scope_and_public_ones_need_no_sign_in(served: Served) -> None:
    document, campus = served.document, served.campus
    registry = campus.registry
    base = campus.settings.base_url
    # What REST takes (tests/web/test_rest_bearer.py tries each): a personal access token, no OAuth flow.
    token = document["components"]["securitySchemes"]["personal_token"]
    assert (token["type"], token["scheme"]) == ("http", "bearer")
    assert f"{base}/dashboard/tokens" in token["description"]
    assert all(f"`{name}`" in token["description"] for name in registry.scopes)
    assert document["components"]["securitySchemes"]["dashboard_session"]["in"] == "cookie"
    names = _operation_routes(campus)
    for method, path, operation in _operations(document):
        tool = registry.tools[names[(method, path)]]
        security = operation["security"]
        assert {"personal_token": [tool.scope]} in security, f"{method} {path}"
        assert ({} in security) == registry.scopes[tool.scope].always_on, f"{method} {path}: {security}"
    catalog = document["paths"]["/api/v1/catalog/sections"]["get"]
    me = document["paths"]["/api/v1/me/courses"]["get"]
    assert {} in catalog["security"] and {} not in me["security"]
    assert set(me["responses"]) >= {"200", "400", "401", "403"}


async def test_the_docs_page_lists_every_route_with_no_script_and_no_cdn(served: Served) -> None:
    document = served.document
    page, unknown = served.page, served.unknown
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = page.text
    for method, path, operation in _operations(document):
        assert f"{method} {path}" in text
        assert operation["summary"].replace("'", "&#x27;") in text
    assert "/api/v1/openapi.json" in text
    assert "<script" not in text and "cdn" not in text and "unpkg" not in text
    # The page's router does not turn other API paths into an HTML page.
    assert unknown.status_code == 404 and unknown.headers["content-type"].startswith("application/json")
