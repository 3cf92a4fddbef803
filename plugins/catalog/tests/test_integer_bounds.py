"""Every integer argument of the catalog is bounded (issue 9.7): an ``offset`` of 2**63 reached
the database's OFFSET and answered 500 on the five paged routes and their tools. Now a value
outside the range, either way, is a 400 (and a tool error) naming the field and both ends."""

from __future__ import annotations

from typing import Any

import pytest
from campus_catalog.schemas import MAX_OFFSET, MAX_PAGE_SIZE
from campus_mcp.testing import CampusHarness

# The five paged routes and their tools.
PAGED: list[tuple[str, str]] = [
    ("search_sections", "/api/v1/catalog/sections?term=202720"),
    ("search_courses", "/api/v1/catalog/courses?q=programming"),
    ("search_instructors", "/api/v1/catalog/instructors?q=ada"),
    ("search_reviews", "/api/v1/catalog/reviews?instructor=ada-lovelace"),
    ("university_events", "/api/university_calendar_events?category=holiday"),
]
HOSTILE: list[tuple[str, int, str]] = [
    ("offset", 2**63, f"from 0 to {MAX_OFFSET}"),
    ("offset", -1, f"from 0 to {MAX_OFFSET}"),
    ("offset", 10**30, f"from 0 to {MAX_OFFSET}"),
    ("limit", 2**63, f"from 1 to {MAX_PAGE_SIZE}"),
    ("limit", 0, f"from 1 to {MAX_PAGE_SIZE}"),
]
# The two "similar" lookups take a limit of their own.
SIMILAR: list[tuple[str, dict[str, Any], str]] = [
    ("similar_sections", {"crn": "20001"}, "/api/v1/catalog/sections/20001/similar"),
    ("similar_instructors", {"pub_id": "ada-lovelace"}, "/api/v1/catalog/instructors/ada-lovelace/similar"),
]


def _url(base: str, field: str, value: int) -> str:
    return f"{base}{'&' if '?' in base else '?'}{field}={value}"


@pytest.fixture(scope="module")
async def rest(rest_catalog_campus: CampusHarness, get_all: Any) -> dict[str, tuple[int, Any]]:
    urls = [_url(base, field, value) for _, base in PAGED for field, value, _ in HOSTILE]
    urls += [_url(base, "limit", value) for _, _, base in SIMILAR for value in (2**63, 0)]
    urls += [_url(base, "offset", MAX_OFFSET) for _, base in PAGED]
    urls += [f"/api/university_calendar_events?start_date={day}" for day in ("9999-12-31", "0001-01-01")]
    answers: dict[str, tuple[int, Any]] = await get_all(rest_catalog_campus, urls)
    return answers


@pytest.mark.parametrize(("tool", "base"), PAGED, ids=[tool for tool, _ in PAGED])
@pytest.mark.parametrize(("field", "value", "says"), HOSTILE, ids=[f"{f}={v}" for f, v, _ in HOSTILE])
async def test_a_paged_route_refuses_an_integer_out_of_range(
    rest: dict[str, tuple[int, Any]], tool: str, base: str, field: str, value: int, says: str
) -> None:
    status, body = rest[_url(base, field, value)]
    assert status == 400, body
    assert body["field"] == field
    assert body["fields"][0]["rule"] == "out_of_range"
    assert f"{field}: Input should be a whole number {says}" in body["message"]


@pytest.mark.parametrize(("tool", "base"), PAGED, ids=[tool for tool, _ in PAGED])
@pytest.mark.parametrize(("field", "value", "says"), HOSTILE, ids=[f"{f}={v}" for f, v, _ in HOSTILE])
async def test_a_paged_tool_refuses_an_integer_out_of_range(
    catalog: Any, tool: str, base: str, field: str, value: int, says: str
) -> None:
    arguments = {"term": "202720"} if tool == "search_sections" else {}
    text = await catalog.error(tool, **arguments, **{field: value})
    assert f"{field}: Input should be a whole number {says}" in text
    assert "failed on the server" not in text


@pytest.mark.parametrize("tool", [tool for tool, _ in PAGED])
async def test_the_largest_offset_is_an_empty_last_page(
    rest: dict[str, tuple[int, Any]], catalog: Any, tool: str
) -> None:
    base = dict(PAGED)[tool]
    status, body = rest[_url(base, "offset", MAX_OFFSET)]
    assert status == 200, body
    assert body["offset"] == MAX_OFFSET and body["next_offset"] is None
    arguments = {"term": "202720"} if tool == "search_sections" else {}
    answer = await catalog.ok(tool, **arguments, offset=MAX_OFFSET)
    assert answer["offset"] == MAX_OFFSET


@pytest.mark.parametrize(("tool", "arguments", "base"), SIMILAR, ids=[tool for tool, _, _ in SIMILAR])
@pytest.mark.parametrize("value", [2**63, 0])
async def test_the_similar_lookups_bound_their_limit(
    rest: dict[str, tuple[int, Any]],
    catalog: Any,
    tool: str,
    arguments: dict[str, Any],
    base: str,
    value: int,
) -> None:
    status, body = rest[_url(base, "limit", value)]
    assert status == 400, body
    assert "limit: Input should be a whole number from 1 to 50" in body["message"]
    text = await catalog.error(tool, **arguments, limit=value)
    assert "limit: Input should be a whole number from 1 to 50" in text


async def test_the_tools_advertise_the_ranges(catalog_campus: CampusHarness) -> None:
    async with catalog_campus.mcp() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for tool, _ in PAGED:
        properties = tools[tool].input_schema["properties"]
        assert (properties["offset"]["minimum"], properties["offset"]["maximum"]) == (0, MAX_OFFSET), tool
        assert (properties["limit"]["minimum"], properties["limit"]["maximum"]) == (1, MAX_PAGE_SIZE), tool
    for tool, _, _ in SIMILAR:
        limit = tools[tool].input_schema["properties"]["limit"]
        assert (limit["minimum"], limit["maximum"]) == (1, 50), tool


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
async def test_the_calendar_refuses_a_date_no_campus_calendar_has(
    rest: dict[str, tuple[int, Any]], catalog: Any, day: str
) -> None:
    # 9999-12-31 plus the default 180-day window overflowed the date type: a 500 before.
    status, body = rest[f"/api/university_calendar_events?start_date={day}"]
    assert status == 400, body
    assert body["field"] == "start_date"
    assert "start_date: Input should be" in body["message"]
    text = await catalog.error("university_events", start_date=day)
    assert "start_date: Input should be" in text
