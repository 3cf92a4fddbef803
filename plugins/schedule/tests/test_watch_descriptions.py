"""The seat-watch tools name the campus in their descriptions (issue 37, point 9), as every other
family's tools do, so "tell me when a seat opens" goes to this campus's tool: checked in the
``tools/list`` an MCP SDK client reads, on a campus whose short name is not the demo's."""

from __future__ import annotations

from campus_mcp.testing import CampusFactory

WATCH_TOOLS = ("watch_section", "unwatch_section", "list_watches")


async def test_the_seat_watch_tools_name_the_campus(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True, campus_name="Texas A&M University", campus_short_name="TAMU")
    async with campus.mcp(principal=await campus.student_principal("student1")) as client:
        listed = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    assert {name: "TAMU" in listed[name] for name in WATCH_TOOLS} == dict.fromkeys(WATCH_TOOLS, True)
