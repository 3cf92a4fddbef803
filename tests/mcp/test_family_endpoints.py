"""``/api/mcp/{plugin}`` (issue 14.1): one family's flat server, so a deployment can hand a client
only the catalog; each endpoint's own instructions and ``server/discover``; one OAuth resource.

Over real HTTP with the SDK client on a demo campus with every family, in both protocol eras.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import httpx2
import mcp_types as types
import pytest_asyncio
from campus_mcp.mcp.toolboxes import META_TOOLS
from campus_mcp.testing import CampusHarness, TestDatabases
from campus_mcp.testing.oauth import BrowserStudent, MemoryStorage, provider_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.endpoints import ERAS, MODERN, mcp_client, served_demo_campus, token_for

READ_SCOPES = ("schedule:read", "friends:read", "settings:read")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


def named_tools(text: str, known: set[str]) -> set[str]:
    return set(re.findall(r"[a-z][a-z0-9_]*", text)) & known


async def test_the_catalog_endpoint_serves_only_the_catalog(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    registry = campus.registry
    catalog_tools = {name for name, tool in registry.tools.items() if tool.plugin == "catalog"}
    drawn = {tool.app_resource for tool in registry.tools.values() if tool.plugin == "catalog" and tool.app_resource}
    token = await token_for(campus.deployment, READ_SCOPES)
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp/catalog", token, mode) as client:
            assert (str(client.protocol_version) == MODERN) == (mode == "auto")
            listed = {tool.name for tool in (await client.list_tools()).tools}
            prompts = (await client.list_prompts()).prompts
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            terms = await client.call_tool("list_terms", {})
            description = client.server_info.description if client.server_info else ""
            instructions = client.instructions or ""
        assert listed == catalog_tools, mode
        assert prompts == [] and resources == drawn, (prompts, resources)
        assert not terms.is_error and (terms.structured_content or {}).get("terms"), terms.content
        # Its own instructions and description: the catalog's, with no other family's tools or topics.
        assert instructions and named_tools(instructions, set(registry.tools)) <= catalog_tools, instructions
        assert description and "Course catalog" in description and "My schedule" not in description, description


async def test_a_tool_of_another_family_is_unknown_on_a_family_endpoint(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with mcp_client(f"{base}/api/mcp/catalog", token, "legacy") as client:
        try:
            await client.call_tool("my_courses", {})
        except Exception as exc:  # the SDK raises the JSON-RPC error
            message = str(exc)
        else:
            raise AssertionError("my_courses ran on the catalog endpoint")
    assert "my_courses" in message and "list_terms" in message and "my_finals" not in message, message


async def test_each_endpoint_promises_only_the_tools_it_has_in_both_eras(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    registry = campus.registry
    meta = {tool.name for tool in META_TOOLS}
    known = set(registry.tools) | meta
    token = await token_for(campus.deployment, READ_SCOPES)
    endpoints = campus.deployment.endpoint.servers if campus.deployment.endpoint else {}
    assert set(endpoints) >= {"/api/mcp", "/api/mcp/toolboxes", "/api/mcp/catalog", "/api/mcp/schedule"}
    # A family comes with the families it depends on: friend_busy_times sends the model to my_busy_times.
    friends = set(endpoints["/api/mcp/friends"].tools)
    assert {"friend_busy_times", "my_busy_times", "list_terms"} <= friends and "list_dining_halls" not in friends
    for path, server in endpoints.items():
        # What a client can reach there: the tools, or in toolbox mode the meta-tools and what they proxy.
        reachable = set(server.tools) | (meta if server.toolboxes is not None else set())
        for mode in ERAS:
            async with mcp_client(f"{base}{path}", token, mode) as client:
                instructions = client.instructions or ""
                tools = (await client.list_tools()).tools
            listed = {tool.name for tool in tools}
            texts = [instructions] + [tool.description or "" for tool in tools]
            assert instructions, (path, mode)
            assert listed == (meta if server.toolboxes is not None else set(server.tools)), path
            promised = set().union(*(named_tools(text, known) for text in texts))
            assert promised <= reachable, (path, mode, promised - reachable)


async def test_a_token_for_api_mcp_works_on_every_endpoint_and_a_sign_in_at_a_family_is_for_api_mcp(
    served: tuple[str, CampusHarness],
) -> None:
    base, campus = served
    # A sign-in that starts at /api/mcp/catalog: the 401 points to the one resource metadata.
    async with httpx.AsyncClient(base_url=base) as http:
        challenge = await http.post("/api/mcp/catalog", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        metadata = (await http.get("/.well-known/oauth-protected-resource/api/mcp")).json()
    assert challenge.status_code == 401
    assert (
        f'resource_metadata="{base}/.well-known/oauth-protected-resource/api/mcp"'
        in challenge.headers["www-authenticate"]
    )
    assert metadata["resource"] == f"{base}/api/mcp"

    storage = MemoryStorage()
    student = BrowserStudent("student1", "demo")
    catalog = f"{base}/api/mcp/catalog"
    async with (
        httpx2.AsyncClient(auth=provider_for(catalog, student, storage), timeout=60) as browser_app,
        Client(streamable_http_client(catalog, http_client=browser_app)) as client,  # type: ignore[arg-type]
    ):
        assert not (await client.call_tool("list_terms", {})).is_error
    assert storage.tokens is not None and student.last_consent is not None
    signed_in = storage.tokens.access_token
    minted = await token_for(campus.deployment, READ_SCOPES)
    for token in (signed_in, minted):
        for path in ("/api/mcp", "/api/mcp/toolboxes", "/api/mcp/catalog", "/api/mcp/schedule"):
            async with mcp_client(f"{base}{path}", token, MODERN) as client:
                assert (await client.list_tools()).tools, path


async def test_an_unknown_or_toolless_family_is_a_404_naming_the_endpoints(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
        for path in ("/api/mcp/catalgo", "/api/mcp/apps", "/api/mcp/core"):
            for method in ("POST", "GET"):
                response = await http.request(method, path, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                assert response.status_code == 404, (path, response.text)
                body = response.json()
                assert path in body["error_description"] and "/api/mcp/catalog" in body["error_description"]
                assert (
                    f"{base}/api/mcp/toolboxes" in body["endpoints"] and f"{base}/api/mcp/catalog" in body["endpoints"]
                )
                assert "Traceback" not in response.text
                if path == "/api/mcp/apps":  # the 404 says why a family of views has no endpoint
                    assert "views only" in body["error_description"], body


async def test_the_prompts_family_has_an_endpoint_with_the_tools_its_prompts_name(
    served: tuple[str, CampusHarness],
) -> None:
    base, campus = served
    registry = campus.registry
    token = await token_for(campus.deployment, READ_SCOPES)
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp/prompts", token, mode) as client:
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            tools = {t.name for t in (await client.list_tools()).tools}
            completed = await client.complete(
                types.PromptReference(type="ref/prompt", name="plan_term_schedule"),
                {"name": "term", "value": ""},
            )
        assert prompts == {p.name for p in registry.prompts.values() if p.plugin == "prompts"}, mode
        # Its prompts send the model to the catalog's and the schedule's tools: those come with it.
        assert "search_sections" in tools and "my_courses" in tools and "list_friends" not in tools, tools
        assert completed.completion.values, mode
