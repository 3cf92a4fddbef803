"""``/api/mcp/toolboxes`` (issue 14.1, seed 004): the four meta-tools, over real HTTP with the SDK
client and real access tokens, on a demo campus with every family, in both protocol eras.

A proxied call must be the direct call: the same answer, the same permission error, the same
question before a change, the same 403 step-up for an app on the allow list.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import CampusHarness, TestDatabases

from tests.support.endpoints import (
    ERAS,
    MODERN,
    confirm_in_the_students_browser,
    mcp_client,
    page_link_in,
    served_demo_campus,
    token_for,
    token_of_app,
)

# Seed 004's meta-tools: name, description, inputSchema and annotations, as the seed gives them.
TOOLBOX_ARGS = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "the toolbox name, as returned by list_toolboxes"}},
    "required": ["name"],
}
PROXY_ARGS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "the tool name, as returned by open_toolbox"},
        "arguments": {"type": "object", "description": "the tool arguments, matching its inputSchema"},
    },
    "required": ["name"],
}
SEED_004 = {
    "list_toolboxes": (
        "Lists the available toolboxes, each groups related tools and prompts",
        {"type": "object", "properties": {}},
        {"readOnlyHint": True},
    ),
    "open_toolbox": (
        "Returns the definitions of the tools in a toolbox and the names of its prompts",
        TOOLBOX_ARGS,
        {"readOnlyHint": True, "idempotentHint": True},
    ),
    "call_read_only": (
        "Runs a tool that only reads data (proxy: call_read_only) from a toolbox, as returned by open_toolbox",
        PROXY_ARGS,
        {"readOnlyHint": True, "openWorldHint": False},
    ),
    "call_tool": (
        "Runs a tool that can change data (proxy: call_tool) from a toolbox, as returned by open_toolbox. "
        "Prefer call_read_only for tools that only read data",
        PROXY_ARGS,
        {"readOnlyHint": False, "openWorldHint": False},
    ),
}
READ_SCOPES = ("schedule:read", "friends:read", "settings:read")
STEP_UP_APP = "step-up-app"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    async with served_demo_campus(campus_databases, step_up_clients=[STEP_UP_APP]) as served:
        yield served


def dumped(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


def text_of(result: types.CallToolResult) -> list[str]:
    return [item.text for item in result.content if isinstance(item, types.TextContent)]


async def test_tools_list_is_the_four_meta_tools_of_seed_004(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp/toolboxes", token, mode) as client:
            tools = {tool.name: dumped(tool) for tool in (await client.list_tools()).tools}
            instructions = client.instructions or ""
            assert (str(client.protocol_version) == MODERN) == (mode == "auto")
        assert set(tools) == set(SEED_004), mode
        for name, (description, schema, hints) in SEED_004.items():
            assert tools[name]["description"] == description
            assert tools[name]["inputSchema"] == schema
            assert tools[name]["annotations"] == hints
        # The endpoint's own instructions say how to reach the tools, in its own words.
        assert "list_toolboxes" in instructions and "call_read_only" in instructions, instructions


async def test_list_open_and_call_through_both_proxies_in_both_eras(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp", token, mode) as flat:
            direct_tools = {tool.name: dumped(tool) for tool in (await flat.list_tools()).tools}
            direct_terms = await flat.call_tool("list_terms", {})
            direct_courses = await flat.call_tool("my_courses", {})
        async with mcp_client(f"{base}/api/mcp/toolboxes", token, mode) as client:
            listed = await client.call_tool("list_toolboxes", {})
            assert not listed.is_error, text_of(listed)
            boxes = {box["name"]: box for box in (listed.structured_content or {})["toolboxes"]}
            # Every family with a tool or a prompt, titled and described by its plugin info.
            assert set(boxes) == {"canvas", "catalog", "dining", "friends", "prompts", "schedule", "settings"}, boxes
            for name, box in boxes.items():
                info = campus.registry.plugins[name]
                assert (box["title"], box["description"]) == (info.title, info.description)
            assert boxes["prompts"]["prompts"] and not boxes["prompts"]["tools"]

            opened = await client.call_tool("open_toolbox", {"name": "catalog"})
            assert not opened.is_error, text_of(opened)
            catalog = opened.structured_content or {}
            # The very definitions tools/list gives on /api/mcp, and only the catalog's.
            assert {t["name"]: t for t in catalog["tools"]} == {
                name: tool for name, tool in direct_tools.items() if campus.registry.tools[name].plugin == "catalog"
            }
            assert catalog["prompts"] == []
            prompts = await client.call_tool("open_toolbox", {"name": "prompts"})
            assert (prompts.structured_content or {})["prompts"] == [
                p.name for p in campus.registry.prompts.values() if p.plugin == "prompts"
            ]

            terms = await client.call_tool("call_read_only", {"name": "list_terms", "arguments": {}})
            courses = await client.call_tool("call_tool", {"name": "my_courses"})
        for proxied, direct in ((terms, direct_terms), (courses, direct_courses)):
            assert not proxied.is_error, text_of(proxied)
            assert proxied.structured_content == direct.structured_content
            assert proxied.structured_content


async def test_call_read_only_refuses_a_write_tool(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, [*READ_SCOPES, "notifications:write"])
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp/toolboxes", token, mode) as client:
            refused = await client.call_tool(
                "call_read_only", {"name": "set_notifications", "arguments": {"paused": True}}
            )
            settings = await client.call_tool("call_read_only", {"name": "my_calendar_settings"})
        assert refused.is_error
        (message,) = text_of(refused)
        assert "set_notifications changes data" in message and "call_tool" in message, message
        assert (settings.structured_content or {})["notifications"]["paused"] is False  # nothing changed


async def test_a_toolbox_call_without_its_scope_gets_the_direct_calls_permission_error(
    served: tuple[str, CampusHarness],
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, ["settings:read"])  # no schedule:read
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp", token, mode) as flat:
            direct = await flat.call_tool("my_courses", {})
        async with mcp_client(f"{base}/api/mcp/toolboxes", token, mode) as client:
            read_only = await client.call_tool("call_read_only", {"name": "my_courses", "arguments": {}})
            any_tool = await client.call_tool("call_tool", {"name": "my_courses", "arguments": {}})
        assert direct.is_error and "schedule:read" in text_of(direct)[0], direct
        for proxied in (read_only, any_tool):
            assert proxied.is_error
            assert proxied.model_dump(exclude={"meta"}) == direct.model_dump(exclude={"meta"}), mode


async def test_an_app_on_the_step_up_list_gets_the_same_403_through_a_proxy(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_of_app(campus.deployment, STEP_UP_APP, ["settings:read"])
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}

    async with httpx.AsyncClient(base_url=base, headers=headers) as http:
        direct = await http.post("/api/mcp", json=call("my_courses", {}))
        proxied = await http.post("/api/mcp/toolboxes", json=call("call_tool", {"name": "my_courses"}))
        # call_read_only refuses a write tool whatever the token holds: no step-up for it.
        refused = await http.post(
            "/api/mcp/toolboxes", json=call("call_read_only", {"name": "set_notifications", "arguments": {}})
        )
    assert direct.status_code == 403, direct.text
    assert (proxied.status_code, proxied.json()) == (403, direct.json())
    assert proxied.headers["www-authenticate"] == direct.headers["www-authenticate"]
    assert refused.status_code == 200 and refused.json()["result"]["isError"] is True


def answering(action: str) -> Any:
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)  # type: ignore[arg-type]

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


async def test_a_write_tool_through_call_tool_asks_as_the_direct_call_does(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, [*READ_SCOPES, "notifications:write"], username="student2")
    pause = {"paused": True, "hours": 2}
    toolboxes = f"{base}/api/mcp/toolboxes"

    # 2026-07-28 with form elicitation: the direct call and the proxy both ask first, the same question.
    async with mcp_client(f"{base}/api/mcp", token, MODERN, elicitation_callback=answering("decline")) as flat:
        direct = await flat.session.call_tool("set_notifications", pause, allow_input_required=True)
    declining = answering("decline")
    async with mcp_client(toolboxes, token, MODERN, elicitation_callback=declining) as client:
        arguments = {"name": "set_notifications", "arguments": pause}
        first = await client.session.call_tool("call_tool", arguments, allow_input_required=True)
        assert isinstance(direct, types.InputRequiredResult) and isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None and direct.input_requests is not None
        asked, asked_direct = first.input_requests["confirm"], direct.input_requests["confirm"]
        assert asked.params.message == asked_direct.params.message  # type: ignore[union-attr]
        # Declined through the SDK's own round trip: asked once, nothing changes.
        kept = await client.call_tool("call_tool", arguments)
        assert not kept.is_error, text_of(kept)
        assert (kept.structured_content or {})["not_changed"]["reason"] == "declined"
        assert len(declining.asked) == 1
        settings = await client.call_tool("call_read_only", {"name": "my_calendar_settings"})
        assert (settings.structured_content or {})["notifications"]["paused"] is False

    # The legacy era on HTTP cannot be asked: the proxied call, as the direct one, answers (not as an
    # error) the question and a link to the confirmation page, and changes nothing (issue 39); the
    # student's own browser confirms there, and the proxy then reads the change.
    legacy = answering("decline")
    async with mcp_client(toolboxes, token, "legacy", elicitation_callback=legacy) as client:
        first = await client.call_tool("call_tool", {"name": "set_notifications", "arguments": pause})
        assert not first.is_error, text_of(first)
        waiting = (first.structured_content or {})["not_changed"]
        assert waiting["reason"] == "confirm_on_page" and asked_direct.params.message in waiting["message"]  # type: ignore[union-attr]
        link = page_link_in(base, waiting["message"])
        settings = await client.call_tool("call_read_only", {"name": "my_calendar_settings"})
        assert (settings.structured_content or {})["notifications"]["paused"] is False
        assert "Done: the change was made." in await confirm_in_the_students_browser(base, link, "student2")
        paused = await client.call_tool("call_read_only", {"name": "my_calendar_settings"})
    assert (paused.structured_content or {})["notifications"]["paused"] is True and legacy.asked == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_toolbox_or_tool_is_refused_naming_the_valid_ones(
    served: tuple[str, CampusHarness], mode: str
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with mcp_client(f"{base}/api/mcp/toolboxes", token, mode) as client:
        box = await client.call_tool("open_toolbox", {"name": "catalgo"})
        tool = await client.call_tool("call_read_only", {"name": "list_term", "arguments": {}})
        nameless = await client.call_tool("call_tool", {"arguments": {}})
    assert box.is_error and "'catalgo'" in text_of(box)[0] and "catalog, dining" in text_of(box)[0]
    assert tool.is_error and "'list_term'" in text_of(tool)[0] and "list_terms" in text_of(tool)[0]
    assert nameless.is_error and "name" in text_of(nameless)[0]
