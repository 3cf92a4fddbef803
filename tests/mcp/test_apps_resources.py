"""The apps family on the wire (issue 13, point 4): four ``ui://campus-mcp/<app>`` views.

Through /api/mcp on loopback with the real SDK client in both protocol eras: the extension is
declared, ``resources/list`` and ``resources/read`` give each view as ``text/html;profile=mcp-app``
with the shared CSS and JavaScript in place of their include lines and no URL to load, and the
tools seed 000 names carry ``_meta.ui.resourceUri`` and the old flat key. Disabling ``apps`` takes
away the views and the links and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from campus_mcp import AppResource, PluginError, PluginInfo, hookimpl
from campus_mcp.assembly.registry import load_registry
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing import test_settings as settings_for
from campus_mcp.testing.oauth import free_port, serve_on_loopback
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ERAS = ("legacy", "2026-07-28")
EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
# Seed 000 "Apps": the view of each tool.
LINKS = {
    "check_schedule": "ui://campus-mcp/week-grid",
    "my_courses": "ui://campus-mcp/week-grid",
    "my_busy_times": "ui://campus-mcp/busy-times",
    "friend_busy_times": "ui://campus-mcp/busy-times",
    "search_sections": "ui://campus-mcp/catalog",
    "similar_sections": "ui://campus-mcp/catalog",
    "get_section": "ui://campus-mcp/catalog",
    "get_course": "ui://campus-mcp/catalog",
    "get_instructor": "ui://campus-mcp/catalog",
    "my_finals": "ui://campus-mcp/finals",
}
VIEWS = sorted(set(LINKS.values()))
# Anything a browser would fetch: a scheme URL, a protocol-relative one, or a CSS url()/@import.
NETWORK = re.compile(r"(?:https?|wss?|ftp):|(?<![:\w])//[\w-]+\.[\w.-]+|url\(|@import|\bsrc\s*=|\bhref\s*=", re.I)


@pytest.fixture
async def served(campus_factory: CampusFactory) -> AsyncIterator[str]:
    campus = await campus_factory(demo=True)
    async with serve_on_loopback(campus.app, free_port()) as base:
        yield f"{base}/api/mcp"


async def _over_http(url: str, mode: str) -> dict[str, Any]:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        listed = (await client.list_resources()).resources
        reads = {str(r.uri): (await client.read_resource(str(r.uri))).contents for r in listed}
        tools = (await client.list_tools()).tools
        return {"capabilities": client.server_capabilities, "listed": listed, "reads": reads, "tools": tools}


async def _discover(url: str) -> dict[str, Any]:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}}
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(url, json=body, headers={**headers, "Mcp-Method": "server/discover"})
    result: dict[str, Any] = answer.json()["result"]
    return result


@pytest.mark.parametrize("mode", ERAS)
async def test_views_are_listed_read_and_linked_in_both_eras(served: str, mode: str) -> None:
    got = await _over_http(served, mode)
    if mode != "legacy":
        # capabilities.extensions is a 2026-07-28 field (server/discover)...
        extensions = (await _discover(served))["capabilities"].get("extensions", {})
    else:
        # ...which the SDK sieves off a 2025 initialize; the server declares it there too (issue 37
        # point 9), so a 2025 host learns of the views from the capability, not only the tools' _meta.
        extensions = got["capabilities"].extensions or {}
    assert EXTENSION in extensions, f"the server declares no {EXTENSION} extension: {extensions}"
    assert MIME in extensions[EXTENSION].get("mimeTypes", [])
    assert sorted(str(r.uri) for r in got["listed"]) == VIEWS
    assert {r.mime_type for r in got["listed"]} == {MIME}
    for uri, contents in got["reads"].items():
        (content,) = contents
        assert content.mime_type == MIME and str(content.uri) == uri
        html = content.text
        assert html.startswith("<!doctype html>"), uri
        assert "@include" not in html, f"{uri}: an include line was not expanded"
        assert "App.start({" in html and "--color-background-primary" in html, f"{uri}: shared files missing"
        assert not NETWORK.findall(html), f"{uri} would load from the network: {NETWORK.findall(html)}"
        assert (content.meta or {}).get("ui", {}).get("csp") == {}, "no CSP domains: the host's strictest policy"
    # Without signing in, the catalog's tools are the ones listed (the student tools need a token).
    catalog = {name: uri for name, uri in LINKS.items() if uri.endswith("/catalog") or name == "check_schedule"}
    assert _links(got["tools"]) == catalog


def _links(tools: Any) -> dict[str, str]:
    linked = {t.name: t.meta for t in tools if t.meta and ("ui" in t.meta or "ui/resourceUri" in t.meta)}
    for name, meta in linked.items():
        assert meta["ui/resourceUri"] == meta["ui"]["resourceUri"], f"{name}: the old flat key differs"
    return {name: meta["ui"]["resourceUri"] for name, meta in linked.items()}


@pytest.mark.parametrize("mode", ERAS)
async def test_a_signed_in_student_sees_every_link_of_seed_000(demo_campus: CampusHarness, mode: str) -> None:
    student = await demo_campus.student_principal("student1")
    async with demo_campus.mcp(principal=student, mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert _links(tools) == LINKS


async def test_disabling_apps_removes_the_views_and_the_links_and_nothing_else(campus_factory: CampusFactory) -> None:
    with_apps = await campus_factory()
    without = await campus_factory(disable=["apps"])
    assert "apps" not in without.registry.plugins
    async with with_apps.mcp() as client:
        tools_with = (await client.list_tools()).tools
        instructions_with = client.instructions
    async with without.mcp() as client:
        tools_without = (await client.list_tools()).tools
        resources = (await client.list_resources()).resources
        extensions = client.server_capabilities.extensions or {}
        instructions_without = client.instructions
    assert resources == [] and EXTENSION not in extensions
    assert all(t.meta is None or "ui" not in t.meta for t in tools_without)

    def without_ui(tool: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = tool.model_dump(mode="json", by_alias=True)
        meta = {k: v for k, v in (dumped.pop("_meta", None) or {}).items() if k not in ("ui", "ui/resourceUri")}
        return {**dumped, "_meta": meta or None}

    assert [without_ui(t) for t in tools_with] == [without_ui(t) for t in tools_without]
    assert instructions_with == instructions_without
    assert set(with_apps.registry.tools) == set(without.registry.tools)
    assert set(with_apps.registry.scopes) == set(without.registry.scopes)


async def test_a_view_skips_the_tools_of_a_disabled_family(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(disable=["friends"])
    assert "friend_busy_times" not in campus.registry.tools
    assert campus.registry.tools["my_busy_times"].app_resource == "ui://campus-mcp/busy-times"


class _Rival:
    """A second plugin whose view claims a tool the apps plugin already draws."""

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="rival", version="1", title="Rival", description="A second finals view.")

    @hookimpl
    def register_app_resources(self) -> list[AppResource]:
        return [
            AppResource(
                uri="ui://rival/finals",
                name="rival-finals",
                title="Finals",
                description="Finals again.",
                html=lambda: "<!doctype html><p>Finals</p>",
                tools=("my_finals",),
            )
        ]


def test_two_views_claiming_one_tool_stop_start_up() -> None:
    with pytest.raises(PluginError, match=r"tool 'my_finals' is drawn by two app resources.*ui://campus-mcp/finals"):
        load_registry(settings_for("sqlite+aiosqlite://"), [("rival", _Rival())])
