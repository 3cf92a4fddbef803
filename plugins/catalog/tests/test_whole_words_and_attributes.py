"""'A humanities elective on Tue/Thu' on the demo campus, through the MCP client (issue 24,
point 4): title words match whole words, so "humanities" does not find Human Anatomy labs
(both are "human" to a stemmer), and an attribute is found by its code or its name."""

from __future__ import annotations

from typing import Any

from campus_mcp.testing import CampusHarness


async def call(campus: CampusHarness, tool: str, /, **arguments: Any) -> Any:
    return await campus.call(tool, arguments)


async def ok(campus: CampusHarness, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result = await call(campus, tool, **arguments)
    assert not result.is_error, result.content[0].text
    answer: dict[str, Any] = result.structured_content
    return answer


async def test_humanities_does_not_find_human_anatomy(demo_campus: CampusHarness) -> None:
    sections = await ok(demo_campus, "search_sections", q="humanities", days="TR", limit=100)
    assert not [s["title"] for s in sections["sections"] if "Human " in s["title"]]
    courses = await ok(demo_campus, "search_courses", q="humanities", limit=100)
    assert not [c["title"] for c in courses["courses"] if "Human " in c["title"]]
    # Other forms of a word still meet: "programs" finds Programming.
    programs = await ok(demo_campus, "search_courses", q="programs", limit=5)
    assert any("Programming" in c["title"] for c in programs["courses"]), programs["courses"]


async def test_an_attribute_is_found_by_its_code_or_its_name(demo_campus: CampusHarness) -> None:
    by_code = await ok(demo_campus, "search_sections", attribute="HSS", days="TR", limit=100)
    assert by_code["sections"], "the demo campus has no Tue/Thu HSS section"
    crns = [s["crn"] for s in by_code["sections"]]
    for name in ("humanities", "HUM", "Humanities and Social Sciences Elective", "hss"):
        by_name = await ok(demo_campus, "search_sections", attribute=name, days="TR", limit=100)
        assert [s["crn"] for s in by_name["sections"]] == crns, name


async def test_an_attribute_that_names_several_or_none_is_answered_with_the_attributes(
    demo_campus: CampusHarness,
) -> None:
    several = await call(demo_campus, "search_sections", attribute="elective")
    assert several.is_error
    text = several.content[0].text
    assert "names several attributes" in text and "HSS (" in text and "TECH (" in text, text
    unknown = await call(demo_campus, "search_sections", attribute="astrology")
    assert unknown.is_error
    assert "Unknown attribute 'astrology'" in unknown.content[0].text and "HON (" in unknown.content[0].text
