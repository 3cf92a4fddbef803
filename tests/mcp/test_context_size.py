"""The bytes a student's chat pays for the tools (issue 16, point 5), measured as
bench/context_size.py measures them (campus_mcp.mcp.context_size), so a new field or a long
description cannot silently grow every chat.

Issue 16's goals, all met and held here: tools/list under 60 KB with every installed family (2 KB
more a tool past its 31, 4 KB for issue 24's campus-time fields: context_size.tools_list_goal), no
tool definition over 6 KB, a default search_sections page under 8 KB, every read example's answer
under 16 KB.
"""

from __future__ import annotations

import pytest
from campus_mcp.mcp.context_size import (
    ANSWER_GOAL,
    DEFAULT_ANSWER_GOALS,
    SEARCH_PAGE_GOAL,
    TOOL_DEFINITION_GOAL,
    TOOL_DEFINITION_GOAL_38,
    TOOLS_LIST_GOAL_38,
    answer_bytes,
    definition_bytes,
    structured_bytes,
    tools_list_goal,
)
from campus_mcp.testing import CampusHarness

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_default_search_sections_page_fits_in_8_kb(demo_campus: CampusHarness) -> None:
    result = await demo_campus.call("search_sections", {}, scopes=["catalog"])
    assert not result.is_error
    assert (result.structured_content or {})["limit"] == 25
    assert answer_bytes(result) < SEARCH_PAGE_GOAL


async def test_the_tool_definitions_do_not_grow(demo_campus: CampusHarness) -> None:
    student = await demo_campus.student_principal("student1")
    async with demo_campus.mcp(principal=student) as client:
        sizes = {tool.name: definition_bytes(tool) for tool in (await client.list_tools()).tools}
    # 57.4 KB and 4.7 KB (search_sections) when the goals were met: see bench/context_size.py for
    # where the bytes are (per tool: description, input and output schemas, annotations, _meta).
    assert sum(sizes.values()) < tools_list_goal(len(sizes)), sizes
    too_big = {name: size for name, size in sizes.items() if size > TOOL_DEFINITION_GOAL}
    assert too_big == {}, too_big


@pytest.mark.xfail(
    strict=True,
    reason="issue 38 not done: 68.0 KB with every family (was 78.1), search_sections 4.8 KB (bench/context_size.py)",
)
async def test_tools_list_fits_in_45_kb_and_no_definition_in_more_than_3_5_kb(demo_campus: CampusHarness) -> None:
    """Issue 38, point 1. Strict: when the goal is met this passes and the marker must go."""
    student = await demo_campus.student_principal("student1")
    async with demo_campus.mcp(principal=student) as client:
        sizes = {tool.name: definition_bytes(tool) for tool in (await client.list_tools()).tools}
    assert sum(sizes.values()) <= TOOLS_LIST_GOAL_38, sum(sizes.values())
    assert {name: size for name, size in sizes.items() if size > TOOL_DEFINITION_GOAL_38} == {}


async def test_an_output_schema_gives_each_note_once_and_only_keys_with_notes(demo_campus: CampusHarness) -> None:
    """The friends, the requests received and the requests sent each have an untrusted display
    name: list_friends' output schema says so once (three times before), and lists no key that
    carries no note (offset and limit of a search page: the answer shows them)."""
    student = await demo_campus.student_principal("student1")
    async with demo_campus.mcp(principal=student) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    friends = listed["list_friends"].output_schema or {}
    text = str(friends)
    assert text.count("untrusted_text: Written by another student") == 1, friends
    assert set(friends["properties"]) >= {"friends"}
    page = (listed["search_sections"].output_schema or {})["properties"]
    assert "offset" not in page and "limit" not in page
    assert "R is Thursday" in page["sections"]["description"]


async def test_every_read_example_answers_in_under_16_kb(demo_campus: CampusHarness) -> None:
    # The shared demo campus is read-only here: a write tool's example would change it.
    examples = [
        e
        for e in demo_campus.registry.tool_examples
        if e.data == "demo" and not demo_campus.registry.tools[e.tool].writes
    ]
    assert examples
    too_big = []
    for example in examples:
        who = await demo_campus.student_principal(example.user) if example.user else None
        result = await demo_campus.call(example.tool, dict(example.arguments), principal=who)
        assert not result.is_error, (example.tool, result.content)
        if answer_bytes(result) >= ANSWER_GOAL:
            too_big.append((example.tool, dict(example.arguments), answer_bytes(result)))
    assert too_big == []


async def test_the_default_answers_a_model_reads_most_are_compact(demo_campus: CampusHarness) -> None:
    """Issue 38, point 2: my_calendar_settings within 3 KB and list_term_electives within 6 KB of
    structured content when called with no arguments (the rest on request: their own tests)."""
    student = await demo_campus.student_principal("student1")
    sizes = {}
    for tool in DEFAULT_ANSWER_GOALS:
        result = await demo_campus.call(tool, {}, principal=student)
        assert not result.is_error, result.content
        sizes[tool] = structured_bytes(result)
    assert {tool: size for tool, size in sizes.items() if size > DEFAULT_ANSWER_GOALS[tool]} == {}, sizes
