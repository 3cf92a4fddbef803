"""One app served, stopped and served again in the same process answers MCP both times.

The test suite shares one demo campus between test files, and two files of one worker that each
serve it on loopback started its lifespan twice: the SDK's session manager refused the second run
("can only be called once"), uvicorn exited 3 and the whole worker crashed (a CI run of
test_mcp_answer_text after test_fast_call_identical)."""

from __future__ import annotations

from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp.testing import CampusFactory
from mcp import Client


async def test_an_app_serves_mcp_again_after_a_restart(campus_factory: CampusFactory) -> None:
    campus = await campus_factory()  # every installed family, as a deployment runs
    for _ in range(2):
        async with serve_on_loopback(campus.app) as origin, Client(f"{origin}/api/mcp", mode="legacy") as client:
            listed = await client.list_tools()
            assert "search_sections" in [tool.name for tool in listed.tools]
            async with Client(f"{origin}/api/mcp/catalog", mode="legacy") as family:
                assert (await family.list_tools()).tools
