"""The 2026-07-28 wire asks for a tool's input schema on every tools/call (the SDK checks the
Mcp-Param headers against it): it is made once per tool, not generated from the pydantic model
per call, which was a third of a call's CPU (issue 16, bench/mcp_vs_rest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp.mcp import server as mcp_server
from campus_mcp.testing import CampusFactory
from mcp import Client


async def test_the_input_schema_is_made_once_for_many_calls(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    made: list[str] = []
    real = mcp_server.input_schema

    def counted(tool: Any, *rest: Any) -> dict[str, Any]:  # the real function, counted
        made.append(tool.name)
        return real(tool, *rest)

    monkeypatch.setattr(mcp_server, "input_schema", counted)
    # Over HTTP: the in-memory client skips the transport that checks the headers.
    async with serve_on_loopback(campus.app) as origin, Client(f"{origin}/api/mcp", mode="2026-07-28") as client:
        for _ in range(3):
            # With arguments: the SDK checks them against the schema (this empty campus answers
            # with a tool error, which is fine here).
            result = await client.call_tool("get_course", {"code": "COMP 1000"})
            assert result.content
    assert made.count("get_course") <= 1
