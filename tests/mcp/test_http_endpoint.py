"""POST /api/mcp over real HTTP: what a client sees for good and bad requests, in both protocol eras.

A uvicorn server runs the app on a free loopback port inside the test loop; the requests are raw
httpx calls, so the test sees the status codes, headers and bodies exactly as a client would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from campus_mcp import PluginInfo, Scope, Tool, hookimpl
from campus_mcp.testing import CampusFactory
from litestar import Litestar
from pydantic import BaseModel, Field

MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
ACCEPT = "application/json, text/event-stream"


class RoomArgs(BaseModel):
    building: str = Field(description="Building code, e.g. WENTW.")
    floor: int = Field(description="Floor number.")


class Room(BaseModel):
    label: str


async def room_label(_ctx: object, args: RoomArgs) -> Room:
    return Room(label=f"{args.building}-{args.floor}")


class RoomsPlugin:
    """A throwaway plugin with one public tool, so that these tests need no family's data."""

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="rooms", version="1", title="Rooms", description="Room labels.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [Scope(name="rooms", description="Read room labels.", always_on=True)]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [
            Tool(
                name="room_label",
                title="Room label",
                description="Builds a room label from a building code and a floor.",
                scope="rooms",
                input_model=RoomArgs,
                output_model=Room,
                handler=room_label,
            )
        ]


@contextlib.asynccontextmanager
async def serving(app: Litestar) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in this event loop; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(1000):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        if task.done():
            task.result()  # start-up failed: raise its error
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
async def base_url(campus_factory: CampusFactory) -> AsyncIterator[str]:
    campus = await campus_factory(plugins=[], extra_plugins=[("rooms", RoomsPlugin())])
    async with serving(campus.app) as url:
        yield url


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


def legacy_headers(version: str = "2025-11-25") -> dict[str, str]:
    return {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": version}


def modern_request(method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request: the envelope in ``params._meta`` and the routing headers that match it."""
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-test", "version": "1"},
    }
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": MODERN}
    headers["Mcp-Method"] = method
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    return rpc(method, params), headers


def assert_no_stack_trace(response: httpx.Response) -> None:
    text = response.text
    for marker in ("Traceback", 'File "', "site-packages", '.py", line'):
        assert marker not in text, f"stack trace leaked in {response.status_code} body: {text[:500]}"


async def post(client: httpx.AsyncClient, body: Any, headers: dict[str, str]) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = await client.post("/api/mcp", content=content, headers=headers)
    assert response.status_code != 500, response.text
    assert_no_stack_trace(response)
    return response


async def test_get_is_405_with_allow_post(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        for headers in ({"Accept": "text/event-stream"}, {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN}):
            response = await client.get("/api/mcp", headers=headers)
            assert response.status_code == 405
            assert response.headers["allow"] == "POST"
            assert_no_stack_trace(response)


@pytest.mark.parametrize("body", [b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": ', b"\xff\xfe"])
async def test_malformed_json_is_a_parse_error(base_url: str, body: bytes) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        for headers in (legacy_headers(), {**legacy_headers(MODERN), "Mcp-Method": "tools/list"}):
            response = await post(client, body, headers)
            assert response.status_code == 400
            error = response.json()["error"]
            assert error["code"] == -32700
            assert "parse" in error["message"].lower()


@pytest.mark.parametrize("body", [b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', b'"ping"', b'{"id": 1}'])
async def test_json_that_is_not_one_request_is_refused_as_a_client_error(base_url: str, body: bytes) -> None:
    # A batch, a bare value or an object without a method: well-formed JSON, but no request.
    async with httpx.AsyncClient(base_url=base_url) as client:
        for headers in (legacy_headers(), {**legacy_headers(MODERN), "Mcp-Method": "ping"}):
            response = await post(client, body, headers)
            assert response.status_code == 400
            error = response.json()["error"]
            assert error["code"] in (-32600, -32602)
            assert error["message"]


async def test_unknown_method_is_method_not_found(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        response = await post(client, rpc("tools/frobnicate", {}), legacy_headers())
        error = response.json()["error"]
        assert error["code"] == -32601
        assert error["message"]

        body, headers = modern_request("tools/frobnicate")
        response = await post(client, body, headers)
        assert response.status_code == 404
        error = response.json()["error"]
        assert error["code"] == -32601
        assert error["message"]


async def test_unknown_tool_names_it_and_says_how_to_list_tools(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        legacy = await post(client, rpc("tools/call", {"name": "room_numbr", "arguments": {}}), legacy_headers())
        body, headers = modern_request("tools/call", {"name": "room_numbr", "arguments": {}})
        modern = await post(client, body, headers)
        for response in (legacy, modern):
            error = response.json()["error"]
            assert error["code"] == -32602
            assert "room_numbr" in error["message"]
            assert "tools/list" in error["message"]
            assert "room_label" in error["message"]  # the tools it does have


async def test_wrong_argument_types_name_the_field(base_url: str) -> None:
    arguments = {"building": "WENTW", "floor": "third"}
    async with httpx.AsyncClient(base_url=base_url) as client:
        legacy = await post(client, rpc("tools/call", {"name": "room_label", "arguments": arguments}), legacy_headers())
        body, headers = modern_request("tools/call", {"name": "room_label", "arguments": arguments})
        modern = await post(client, body, headers)
        for response in (legacy, modern):
            payload = response.json()
            if "error" in payload:  # a protocol-level rejection must still name the field
                message = payload["error"]["message"]
            else:
                result = payload["result"]
                assert result["isError"] is True
                message = result["content"][0]["text"]
            assert "floor" in message
            assert "integer" in message


async def test_good_call_returns_text_and_structured_content(base_url: str) -> None:
    arguments = {"building": "WENTW", "floor": 3}
    async with httpx.AsyncClient(base_url=base_url) as client:
        response = await post(
            client, rpc("tools/call", {"name": "room_label", "arguments": arguments}), legacy_headers()
        )
        result = response.json()["result"]
        assert result.get("isError") in (None, False)
        assert result["structuredContent"] == {"label": "WENTW-3"}
        assert json.loads(result["content"][0]["text"]) == {"label": "WENTW-3"}


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:8000", "192.0.2.7"])
async def test_bad_host_header_is_rejected(base_url: str, host: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        for headers in (legacy_headers(), {**legacy_headers(MODERN), "Mcp-Method": "ping"}):
            response = await client.post(
                "/api/mcp", content=json.dumps(rpc("ping")).encode(), headers={**headers, "Host": host}
            )
            assert response.status_code in (403, 421), response.text
            assert_no_stack_trace(response)


async def test_foreign_origin_is_rejected(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        response = await client.post(
            "/api/mcp",
            content=json.dumps(rpc("ping")).encode(),
            headers={**legacy_headers(), "Origin": "https://evil.example.com"},
        )
        assert response.status_code == 403
        assert_no_stack_trace(response)


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_initialize_with_each_2025_version(base_url: str, version: str) -> None:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "1"},
    }
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}  # no version header before initialize
    async with httpx.AsyncClient(base_url=base_url) as client:
        response = await post(client, rpc("initialize", params), headers)
        assert response.status_code == 200
        result = response.json()["result"]
        assert result["protocolVersion"] == version
        assert result["serverInfo"]["name"] == "campus-mcp"
        assert "tools" in result["capabilities"]
        assert result["instructions"]

        listed = await post(client, rpc("tools/list", {}, request_id=2), legacy_headers(version))
        assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["room_label"]


async def test_modern_server_discover(base_url: str) -> None:
    body, headers = modern_request("server/discover")
    async with httpx.AsyncClient(base_url=base_url) as client:
        response = await post(client, body, headers)
        assert response.status_code == 200
        result = response.json()["result"]
        assert MODERN in result["supportedVersions"]
        assert "tools" in result["capabilities"]
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "campus-mcp"

        body, headers = modern_request("tools/list")
        listed = await post(client, body, headers)
        assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["room_label"]


async def test_no_token_without_anonymous_access_is_401(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("rooms", RoomsPlugin())], anonymous_access=False)
    async with serving(campus.app) as url, httpx.AsyncClient(base_url=url) as client:
        for headers in (legacy_headers(), {**legacy_headers(MODERN), "Mcp-Method": "tools/list"}):
            response = await client.post("/api/mcp", content=json.dumps(rpc("tools/list", {})), headers=headers)
            assert response.status_code == 401
            challenge = response.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert "resource_metadata=" in challenge
            assert "rooms" in challenge  # the scopes to ask for
            assert_no_stack_trace(response)

        response = await client.post(
            "/api/mcp",
            content=json.dumps(rpc("tools/list", {})),
            headers={**legacy_headers(), "Authorization": "Bearer not-a-real-token"},
        )
        assert response.status_code == 401
        assert 'error="invalid_token"' in response.headers["www-authenticate"]
        assert_no_stack_trace(response)


def test_anonymous_access_is_opt_in_also_in_demo_mode() -> None:
    from campus_mcp.base.settings import Settings

    # DESIGN 11: sign-in is the default once student tools exist, on the demo campus too.
    assert Settings(demo=True).anonymous_access is False
    assert Settings(demo=False, secret_key="k").anonymous_access is False
    assert Settings(demo=True, anonymous_access=False).anonymous_access is False
    assert Settings(demo=False, anonymous_access=True).anonymous_access is True
