"""A tool's text content is its structured content's compact JSON, on both wires, the advisory its
last key, though the MCP layer writes it with pydantic's writer, not ``json.dumps`` (issue 16), and
the reply reuses those bytes for the object. And the advisory is built once per ten minutes, not
per call."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp.mcp import server as mcp_server
from campus_mcp.mcp.advisory import forget_freshness
from campus_mcp.mcp.server import CampusServer
from campus_mcp.testing import CampusHarness
from mcp import Client
from pydantic import BaseModel, Field

# The SDK client's modes: "legacy" is the 2025-11-25 handshake wire.
WIRES = ("legacy", "2026-07-28")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def origin(demo_campus: CampusHarness) -> AsyncIterator[str]:
    async with serve_on_loopback(demo_campus.app) as served:
        yield served


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("wire", WIRES)
async def test_the_text_is_the_structured_answer_in_compact_json(origin: str, wire: str) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_sections", {"subject": "COMP", "limit": 5}),
        ("get_section", {"crn": "20001"}),
        ("list_terms", {}),
    ]
    async with Client(f"{origin}/api/mcp", mode=wire) as client:
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content
            text = result.content[0].text  # type: ignore[union-attr]
            structured = result.structured_content
            assert structured is not None
            assert json.loads(text) == structured
            # Byte for byte the compact JSON of the object, the advisory last, as the model read it before.
            assert text == compact(structured)
            assert list(structured)[-1] == "advisory"
            assert structured["advisory"]["data_sources"], tool


async def test_a_bad_argument_is_still_a_tool_error_naming_the_field(origin: str) -> None:
    async with Client(f"{origin}/api/mcp", mode=WIRES[0]) as client:
        result = await client.call_tool("search_sections", {"limit": "lots"})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "limit" in text and "Traceback" not in text


async def test_the_advisory_is_built_once_for_many_calls(
    demo_campus: CampusHarness, origin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    forget_freshness()
    built: list[str] = []
    real = mcp_server.answer_advisory

    async def counted(registry: Any, sessions: Any, keys: Any) -> Any:  # the real function, counted
        advisory = await real(registry, sessions, keys)
        built.append(json.dumps(advisory.value))
        return advisory

    reads: list[str] = []
    source = demo_campus.registry.data_sources["sections"]
    real_read = source.last_refresh

    async def read(session: Any) -> Any:
        reads.append("sections")
        return await real_read(session)

    monkeypatch.setattr(mcp_server, "answer_advisory", counted)
    monkeypatch.setitem(demo_campus.registry.data_sources, "sections", dataclasses.replace(source, last_refresh=read))
    async with Client(f"{origin}/api/mcp", mode=WIRES[0]) as client:
        answers = [await client.call_tool("search_sections", {"subject": "COMP", "limit": 2}) for _ in range(3)]
    assert len(built) == 3 and len(set(built)) == 1  # the same advisory every time
    assert reads == ["sections"]  # its freshness read once, not per call
    assert all(a.structured_content["advisory"] == answers[0].structured_content["advisory"] for a in answers)  # type: ignore[index]


class Routed(BaseModel):
    region: str = Field(json_schema_extra={"x-mcp-header": "Region"})


def test_only_a_schema_that_declares_a_param_header_goes_to_the_sdks_header_check(
    demo_campus: CampusHarness,
) -> None:
    # The SDK walks the schema it is given twice per 2026-07-28 call; without an x-mcp-header
    # there is nothing to check, so it gets none, and a tool with one keeps its check.
    server = CampusServer(demo_campus.registry, demo_campus.sessions, family="catalog")
    server.tools["routed"] = dataclasses.replace(server.tools["list_terms"], name="routed", input_model=Routed)
    declared = server.header_schema_of("routed")
    assert declared is not None and declared["properties"]["region"]["x-mcp-header"] == "Region"
    assert server.header_schema_of("search_sections") is None
    assert server._input_schema_of("search_sections") is not None  # still made, for everything else
    assert server.header_schema_of("no_such_tool") is None
    assert "no_such_tool" not in server._header_schemas  # a client's made-up names are not kept
