"""Hostile requests to ``POST /api/mcp`` over real HTTP on loopback (issue 9, points 6 and 7).

With a step-up allow list the endpoint reads the body to see which tool a ``tools/call`` names.
It must read no more than the SDK would (a huge chunked body is refused without being buffered),
and a ``params.name`` that is not a string is the client's mistake (400), not a server failure.
An oversized argument is quoted in the error by a short prefix only, never echoed back whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from campus_mcp.mcp.server import set_sdk_log_level
from campus_mcp.oauth.store import ClientRecord, OAuthStore
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import ScopeProbe, free_port, probe_campus_on_loopback, serve_on_loopback
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError

ACCEPT = "application/json, text/event-stream"
TOKEN = "probe-access-token-for-the-endpoint-tests"  # a test token, in a test database
CLIENT_ID = "probe-client"


@contextlib.asynccontextmanager
async def step_up_endpoint(campus_factory: CampusFactory) -> AsyncIterator[str]:
    """A campus with a step-up allow list and a live token of a listed client; yields the base URL."""
    async with probe_campus_on_loopback(campus_factory, step_up_clients=[CLIENT_ID]) as (base, campus):
        await _listed_client_with_a_token(campus)
        yield base


async def _listed_client_with_a_token(campus: CampusHarness) -> None:
    store = OAuthStore(campus.sessions)
    await store.save_client(ClientRecord(client_id=CLIENT_ID, kind="registered", client_name="Probe", redirect_uris=()))
    await store.save_tokens(
        access_token=TOKEN,
        refresh_token=None,
        client_id=CLIENT_ID,
        user_id=1,
        scope="probe:public probe:read",
        resource=campus.settings.mcp_url,
        family_id="family-endpoint-tests",
    )


def headers() -> dict[str, str]:
    return {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
        "Authorization": f"Bearer {TOKEN}",
    }


def tools_call(name: Any, arguments: dict[str, Any] | None = None) -> bytes:
    params = {"name": name, "arguments": arguments or {}}
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode()


def peak_rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/self/status")


def reset_peak_rss() -> None:
    # Writing 5 to clear_refs resets the peak (VmHWM) to the current RSS (Linux >= 4.0).
    Path("/proc/self/clear_refs").write_text("5")


async def chunked_post(base: str, total: int, chunk: int = 64 * 1024) -> tuple[int, bytes, int]:
    """POST ``total`` bytes of body in chunks (no Content-Length) on a raw socket.

    Returns (status, body, bytes sent). Writing stops as soon as the server has answered, as a
    client would; a server that keeps reading would take the whole body.
    """
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = (
        f"POST /api/mcp HTTP/1.1\r\nHost: {host}:{port}\r\nTransfer-Encoding: chunked\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in headers().items())
        + "\r\n"
    )
    writer.write(head.encode())
    # A tools/call whose name the endpoint would look for, then padding inside a JSON string.
    opening = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_probe","arguments":{"x":"'
    piece = b"a" * chunk
    sent = 0

    async def write_body() -> None:
        nonlocal sent
        frame = f"{len(opening):x}\r\n".encode() + opening + b"\r\n"
        writer.write(frame)
        sent += len(opening)
        while sent < total:
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sent += len(piece)
            await writer.drain()
        writer.write(b'6\r\n"}}}}\n\r\n0\r\n\r\n')
        await writer.drain()

    writing = asyncio.create_task(write_body())
    try:
        status_line = await asyncio.wait_for(reader.readline(), timeout=120)
        response_headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            key, _, value = line.decode("latin-1").partition(":")
            response_headers[key.strip().lower()] = value.strip()
        length = int(response_headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
    finally:
        writing.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await writing
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    return int(status_line.split()[1]), body, sent


async def test_a_huge_chunked_body_is_refused_without_buffering_it(campus_factory: CampusFactory) -> None:
    total = 64 * 1024 * 1024  # 16 times the SDK's limit
    async with step_up_endpoint(campus_factory) as base:
        reset_peak_rss()
        before = peak_rss_kib()
        status, body, sent = await chunked_post(base, total)
        grown_mib = (peak_rss_kib() - before) / 1024
    # Buffering the body (what the endpoint did) costs at least its size, twice over when joined.
    assert grown_mib < 24, f"peak RSS grew by {grown_mib:.0f} MiB for a {total >> 20} MiB body ({sent} bytes sent)"
    assert status == 413, body[:300]
    error = json.loads(body)["error"]
    assert "4194304 bytes" in error["message"] and "smaller" in error["message"]


async def test_a_declared_length_over_the_limit_is_refused_before_reading(campus_factory: CampusFactory) -> None:
    async with step_up_endpoint(campus_factory) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        oversized = tools_call("write_probe", {"x": "a" * (DEFAULT_MAX_REQUEST_BODY_SIZE + 10)})
        response = await client.post("/api/mcp", content=oversized, headers=headers())
    assert response.status_code == 413
    assert "4194304 bytes" in response.json()["error"]["message"]


@pytest.mark.parametrize("name", [["write_probe"], {"tool": "write_probe"}, 7, None])
async def test_a_tool_name_that_is_not_a_string_is_a_bad_request(campus_factory: CampusFactory, name: Any) -> None:
    async with step_up_endpoint(campus_factory) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        response = await client.post("/api/mcp", content=tools_call(name), headers=headers())
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32602 and response.json()["id"] == 7
    assert "params.name" in error["message"] and "tools/list" in error["message"]
    assert "Traceback" not in response.text


async def test_a_string_name_still_gets_the_step_up(campus_factory: CampusFactory) -> None:
    async with step_up_endpoint(campus_factory) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        step_up = await client.post("/api/mcp", content=tools_call("write_probe"), headers=headers())
        allowed = await client.post("/api/mcp", content=tools_call("read_probe"), headers=headers())
    assert step_up.status_code == 403
    assert 'scope="probe:public probe:read probe:write"' in step_up.headers["www-authenticate"]
    assert allowed.status_code == 200
    assert allowed.json()["result"]["structuredContent"]["scopes"] == ["probe:public", "probe:read"]


# --- 9.7: an oversized argument is quoted by a short prefix -----------------------------------

HUGE = 1_000_000


@pytest.mark.parametrize(
    ("tool", "field"),
    [
        ("get_course", "code"),
        ("get_section", "crn"),
        ("search_sections", "term"),
        ("search_sections", "q"),
        ("search_reviews", "course"),
        ("degree_requirements", "slug"),
    ],
)
async def test_a_huge_string_argument_is_not_echoed_back(demo_campus: CampusHarness, tool: str, field: str) -> None:
    result = await demo_campus.call(tool, {field: "Z" * HUGE})
    text = result.content[0].text
    assert result.is_error
    assert len(text) < 2048, f"{tool} answered {len(text)} characters for a {HUGE}-character {field}"
    assert field in text, text
    assert "Z" * 81 not in text


async def test_a_huge_tool_name_is_not_echoed_back(demo_campus: CampusHarness) -> None:
    async with demo_campus.mcp() as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("x" * HUGE, {})
    message = raised.value.error.message
    assert "Unknown tool" in message and "tools/list" in message
    assert len(message) < 4096 and "x" * 81 not in message


# --- 9.9: /metrics is not public -------------------------------------------------------------

METRICS_TOKEN = "scraper-token-for-the-metrics-tests"  # a test token, in a test process


@contextlib.asynccontextmanager
async def metrics_server(campus_factory: CampusFactory, **overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
    port = free_port()
    campus = await campus_factory(plugins=[], extra_plugins=[("probe", ScopeProbe())], **overrides)
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        yield client


async def test_metrics_answer_loopback_by_default(campus_factory: CampusFactory) -> None:
    async with metrics_server(campus_factory) as client:
        response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")


async def test_metrics_refuse_an_address_not_on_the_list(campus_factory: CampusFactory) -> None:
    # The test client is on loopback: a list without loopback stands for a scraper elsewhere.
    async with metrics_server(campus_factory, metrics_addresses=["10.0.0.0/8"]) as client:
        response = await client.get("/metrics")
    assert response.status_code == 403
    message = response.json()["message"]
    assert "CAMPUS_MCP_METRICS_ADDRESSES" in message and "CAMPUS_MCP_METRICS_TOKEN" in message
    assert "campus_mcp_" not in response.text


async def test_metrics_with_the_token_from_any_address(
    campus_factory: CampusFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    overrides = {"metrics_addresses": ["10.0.0.0/8"], "metrics_token": METRICS_TOKEN}
    async with metrics_server(campus_factory, **overrides) as client:
        with root_capture(caplog):
            good = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
            wrong = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}x"})
            prefix = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN[:-1]}"})
            bare = await client.get("/metrics")
    assert good.status_code == 200
    assert [wrong.status_code, prefix.status_code, bare.status_code] == [403, 403, 403]
    assert METRICS_TOKEN not in wrong.text + prefix.text + bare.text
    assert caplog.records, "the capture saw no line at all"
    assert not [record for record in caplog.records if METRICS_TOKEN in record.getMessage()]


# --- 8.10: the SDK does not log a line per request -------------------------------------------


@contextlib.contextmanager
def root_capture(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Only what the block logs: the lines of the app's start are cleared first. (The app no longer
    replaces the root logger's handlers, so caplog's handler stays in place.)"""
    caplog.clear()
    yield


def logged_by(caplog: pytest.LogCaptureFixture, prefix: str, below: int) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.name.startswith(prefix) and r.levelno < below]


async def test_a_tool_call_logs_no_info_line_from_the_sdk(
    campus_factory: CampusFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with step_up_endpoint(campus_factory) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        with root_capture(caplog):
            response = await client.post("/api/mcp", content=tools_call("read_probe"), headers=headers())
    assert response.status_code == 200
    assert logged_by(caplog, "httpx", logging.WARNING), "the capture saw no INFO line at all"
    assert not logged_by(caplog, "mcp", logging.WARNING)


async def test_the_sdk_log_level_is_a_setting(campus_factory: CampusFactory, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    anonymous = dict(headers(), Authorization="")
    try:
        async with metrics_server(campus_factory, sdk_log_level="info") as client:
            with root_capture(caplog):
                await client.post("/api/mcp", content=tools_call("public_probe"), headers=anonymous)
        assert logged_by(caplog, "mcp", logging.WARNING)
    finally:
        set_sdk_log_level("WARNING")
