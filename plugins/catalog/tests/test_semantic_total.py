"""A search by meaning reports how many sections or courses are about the student's words, not how
many it ranked (issue 16): ``total`` counts the matches that reach the relevance floor
(``semantic.RELEVANCE_FLOOR``), the pages list exactly those, and a question the catalog has
nothing on finds nothing."""

from __future__ import annotations

from typing import Any

from campus_mcp.testing import CampusHarness


async def _call(campus: CampusHarness, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await campus.call(tool, arguments, scopes=["catalog"])
    assert not result.is_error, result.content
    answer: dict[str, Any] | None = result.structured_content
    assert answer is not None
    return answer


async def test_sections_by_meaning_count_the_matches_and_page_to_each(demo_campus: CampusHarness) -> None:
    question = {"q": "a class about the stock market", "semantic": True, "limit": 100}
    first = await _call(demo_campus, "search_sections", question)
    everything = await _call(demo_campus, "search_sections", {"limit": 1})
    # Before: the candidates, up to 200 (every section of the term has a vector to compare).
    assert 0 < first["total"] < min(everything["total"], 200), (first["total"], everything["total"])
    listed = list(first["sections"])
    offset = first["next_offset"]
    while offset is not None:
        page = await _call(demo_campus, "search_sections", {**question, "offset": offset})
        listed += page["sections"]
        offset = page["next_offset"]
    assert len(listed) == first["total"]
    assert listed[0]["course_code"].startswith("FINC"), listed[0]


async def test_courses_by_meaning_count_the_matches(demo_campus: CampusHarness) -> None:
    page = await _call(demo_campus, "search_courses", {"q": "a class about the stock market", "semantic": True})
    codes = [c["code"] for c in page["courses"]]
    assert codes[0] == "FINC 3300", codes
    assert page["total"] == len(codes) < 25, codes  # a handful of finance courses, not the catalog
    assert page["next_offset"] is None


async def test_a_question_the_catalog_has_nothing_on_finds_nothing(demo_campus: CampusHarness) -> None:
    for tool, key in (("search_sections", "sections"), ("search_courses", "courses")):
        page = await _call(demo_campus, tool, {"q": "underwater basket weaving", "semantic": True})
        assert (page["total"], page[key], page["next_offset"]) == (0, [], None), (tool, page)


async def test_instructors_by_meaning_count_those_who_teach_it(demo_campus: CampusHarness) -> None:
    everyone = await _call(demo_campus, "search_instructors", {"limit": 1})
    page = await _call(demo_campus, "search_instructors", {"q": "accounting", "semantic": True, "limit": 100})
    # Before: 200, every instructor ranked (the depth), however few teach accounting.
    assert 0 < page["total"] < min(everyone["total"], 200), (page["total"], everyone["total"])
    assert len(page["instructors"]) == page["total"]
    nothing = await _call(demo_campus, "search_instructors", {"q": "underwater basket weaving", "semantic": True})
    assert (nothing["total"], nothing["instructors"]) == (0, [])
