"""What holds for every catalog tool: its REST twin answers the same JSON (and fails alike), the
parity check passes with no catalog exemption, results validate against the advertised output
schema, descriptions are prompts within 2,048 characters, and the instructions put triggers first."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
from campus_catalog.operations import BY_NAME, TOOL_NAMES
from campus_mcp.testing import CampusFactory, CampusHarness

# One call of each tool, and the query string of the REST request that asks the same question
# (its path is the tool's row of the catalog's table of operations, with the parameters filled).
ASKED: list[tuple[str, dict[str, Any], str]] = [
    ("list_terms", {}, ""),
    ("list_subjects", {"term": "202720"}, "term=202720"),
    (
        "search_sections",
        {"term": "202720", "days": "TR", "ends_before": "15:00", "limit": 5},
        "term=202720&days=TR&ends_before=15:00&limit=5",
    ),
    ("search_sections", {"term": "202720", "q": "programming"}, "term=202720&q=programming"),
    ("get_section", {"crn": "20001"}, ""),
    ("similar_sections", {"crn": "20001", "limit": 3}, "limit=3"),
    ("search_courses", {"q": "stock market"}, "q=stock+market"),
    ("get_course", {"code": "COMP 2000"}, ""),
    ("list_programs", {}, ""),
    ("degree_requirements", {"slug": "computer-science-bs"}, ""),
    ("list_term_electives", {"term": "202720"}, ""),
    (
        "check_schedule",
        {"crns": ["20001", "20003", "20004"], "term": "202720"},
        "crns=20001&crns=20003&crns=20004&term=202720",
    ),
    ("check_schedule", {"crns": ["20001", "20004"], "term": "202720"}, "crns=20001,20004&term=202720"),
    ("search_instructors", {"q": "ada"}, "q=ada"),
    ("get_instructor", {"pub_id": "ada-lovelace", "term": "202720"}, "term=202720"),
    ("similar_instructors", {"pub_id": "ada-lovelace"}, ""),
    ("search_reviews", {"sentiment": "negative"}, "sentiment=negative"),
    ("university_events", {"category": "holiday"}, "category=holiday"),
]


def rest_url(tool: str, arguments: dict[str, Any], query: str) -> str:
    operation = BY_NAME[tool].operation
    path = operation.path or ""
    for name in operation.path_parameters:
        path = path.replace("{" + name + "}", quote(str(arguments[name])))
    return f"{path}?{query}" if query else path


TWINS: list[tuple[str, dict[str, Any], str]] = [
    (tool, arguments, rest_url(tool, arguments, query)) for tool, arguments, query in ASKED
]


# Bad requests and what their error must say.
REST_ERRORS: list[tuple[str, int, str]] = [
    (
        "/api/v1/catalog/sections?term=202720&begins_after=14:00&ends_before=10:00",
        400,
        "must be later than begins_after",
    ),
    ("/api/v1/catalog/sections?term=Fall%201999", 400, "Unknown term 'Fall 1999'"),
    ("/api/v1/catalog/sections/12ab", 400, "'12ab' is not a CRN"),
    ("/api/v1/catalog/sections/99999", 404, "No section has CRN 99999"),
    ("/api/v1/catalog/courses/COMP%209999", 404, "No course COMP 9999"),
    ("/api/v1/catalog/sections?limit=1000", 400, "limit"),
    ("/api/v1/catalog/sections?subjct=COMP", 400, "subjct"),
]


@pytest.fixture(scope="module")
async def rest(rest_catalog_campus: CampusHarness, get_all: Any) -> dict[str, tuple[int, Any]]:
    """Every REST answer of this module, asked before any tool call on the same campus."""
    urls = [url for _, _, url in TWINS] + [url for url, _, _ in REST_ERRORS]
    answers: dict[str, tuple[int, Any]] = await get_all(rest_catalog_campus, urls)
    return answers


def test_every_tool_has_a_twin_here() -> None:
    assert {name for name, _, _ in TWINS} == set(TOOL_NAMES)


@pytest.mark.parametrize(("tool", "arguments", "url"), TWINS, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(TWINS)])
async def test_rest_twin_answers_the_same(
    rest_catalog_campus: CampusHarness, rest: dict[str, tuple[int, Any]], tool: str, arguments: dict[str, Any], url: str
) -> None:
    result = await rest_catalog_campus.call(tool, arguments)
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    from_tool = dict(result.structured_content or {})
    from_tool.pop("advisory", None)
    status, body = rest[url]
    assert status == 200, body
    assert body == from_tool


@pytest.mark.parametrize(("url", "status", "says"), REST_ERRORS)
async def test_rest_errors_say_what_to_change(
    rest: dict[str, tuple[int, Any]], url: str, status: int, says: str
) -> None:
    answer_status, body = rest[url]
    assert answer_status == status
    assert says in body["message"]


async def test_parity_has_no_catalog_exemption(catalog_campus: CampusHarness) -> None:
    report = catalog_campus.check_parity()
    catalog_routes = {route for route, plugin in report.routes.items() if plugin == "catalog"}
    assert not [p for p in report.problems if "(catalog)" in p or "catalog" in p.split(":")[0]]
    assert not any(route in report.exempt or route in report.pending for route in catalog_routes)
    assert "GET /api/v1/catalog/sections/{crn}" in report.covered
    assert "GET /api/university_calendar_events" in report.covered


async def test_results_hold_to_the_advertised_output_schema(catalog_campus: CampusHarness) -> None:
    async with catalog_campus.mcp() as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for tool, arguments, _ in TWINS:
            result = await client.call_tool(tool, arguments)
            schema = listed[tool].output_schema
            assert schema is not None
            jsonschema.validate(result.structured_content, schema)


async def test_descriptions_are_prompts_that_name_the_campus(catalog_campus: CampusHarness) -> None:
    async with catalog_campus.mcp() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools if t.name in TOOL_NAMES}
    assert set(tools) == set(TOOL_NAMES)
    for name, tool in tools.items():
        description = tool.description or ""
        assert len(description) <= 2048, (name, len(description))
        assert "Use it for" in description, name
        assert "WIT" in description, name
    assert "Waitlists" in tools["search_sections"].description  # type: ignore[operator]
    assert "Electives not listed yet" in tools["search_sections"].description  # type: ignore[operator]
    assert "at most 10 CRNs, one at a time" in tools["get_section"].description  # type: ignore[operator]
    assert "Time conflict" in tools["check_schedule"].description  # type: ignore[operator]
    assert "min_grade" in tools["get_course"].description  # type: ignore[operator]
    assert "override" in tools["get_course"].description  # type: ignore[operator]


async def test_campus_texts_come_from_the_settings(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(
        plugins=["catalog"],
        campus_name="Example Polytechnic",
        campus_short_name="EXPO",
        timezone="America/Chicago",
        plugin_settings={"catalog": {"override_office": "the registrar's override desk"}},
    )
    async with campus.mcp() as client:
        tools = {t.name: t.description or "" for t in (await client.list_tools()).tools}
    assert "EXPO" in tools["search_sections"] and "WIT" not in tools["search_sections"]
    assert "the registrar's override desk" in tools["check_schedule"]
    assert "America/Chicago" in tools["search_sections"]
    instructions = campus.instructions()
    assert "Example Polytechnic" in instructions


def test_instructions_put_the_triggers_first(catalog_campus: CampusHarness) -> None:
    instructions = catalog_campus.instructions()
    assert instructions.index("is this class full") < instructions.index("Overrides (from")
    assert instructions.index("my professor") < instructions.index("time ticket")
    assert len(instructions) <= 2048
