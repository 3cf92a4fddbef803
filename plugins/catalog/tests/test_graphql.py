"""GraphQL at POST /api/v1/graphql and as the catalog_graphql tool: it answers, it is read only,
and each limit (depth, cost, page size, one search by meaning) says which one was exceeded."""

from __future__ import annotations

from typing import Any

from campus_catalog.graphql import MAX_COST, MAX_DEPTH, query_cost
from campus_mcp.testing import CampusHarness
from graphql import parse


async def _rest(campus: CampusHarness, *bodies: dict[str, Any]) -> list[tuple[int, Any]]:
    """POST each body to /api/v1/graphql, all in one client: an app's lifespan runs once."""
    await campus.deployment.engine.dispose()  # the test client runs the app on a loop of its own
    answers = []
    async with campus.rest() as client:
        for body in bodies:
            response = await client.post("/api/v1/graphql", json=body)
            answers.append((response.status_code, response.json()))
    await campus.deployment.engine.dispose()
    return answers


async def _tool(campus: CampusHarness, query: str, **extra: Any) -> Any:
    return await campus.call("catalog_graphql", {"query": query, **extra}, scopes=["catalog"])


def _tool_error(result: Any) -> str:
    assert result.is_error
    return " ".join(getattr(part, "text", "") for part in result.content)


QUERY = '{ sections(subject: "COMP", limit: 3) { total sections { crn course_code title meetings { days } } } }'
LINKED = """query Plan($subject: String) {
  sections(subject: $subject, limit: 2) { sections { crn course { code prerequisites } } }
}"""
MUTATION = 'mutation { dropSection(crn: "10001") { ok } }'
DEEP = (
    "{ sections(limit: 1) { sections { course { offered_sections(limit: 1) { sections { course {"
    " offered_sections(limit: 1) { sections { crn } } } } } } } } }"
)


async def test_the_rest_route_answers_refuses_and_limits(campus_factory) -> None:  # type: ignore[no-untyped-def]
    campus = await campus_factory(demo=True)
    (ok, linked, mutation, deep) = await _rest(
        campus,
        {"query": QUERY},
        {"query": LINKED, "variables": {"subject": "MATH"}},
        {"query": MUTATION},
        {"query": DEEP},
    )
    assert ok[0] == 200, ok
    sections = ok[1]["data"]["sections"]["sections"]
    assert len(sections) == 3 and all(s["course_code"].startswith("COMP") for s in sections)
    assert linked[0] == 200, linked
    assert all(s["course"]["code"].startswith("MATH") for s in linked[1]["data"]["sections"]["sections"])
    assert mutation[0] == 400 and "read only" in mutation[1]["message"]
    assert deep[0] == 400 and "depth limit" in deep[1]["message"]

    result = await _tool(campus, QUERY)
    assert not result.is_error
    assert result.structured_content["data"] == ok[1]["data"]


async def test_a_mutation_is_refused_as_read_only(demo_campus: CampusHarness) -> None:
    message = _tool_error(await _tool(demo_campus, MUTATION))
    assert "read only" in message and "query" in message


async def test_a_too_deep_query_names_the_depth_limit(demo_campus: CampusHarness) -> None:
    message = _tool_error(await _tool(demo_campus, DEEP))
    assert "depth limit" in message and str(MAX_DEPTH) in message


async def test_a_too_costly_query_names_the_cost_limit(demo_campus: CampusHarness) -> None:
    costly = "{ sections(limit: 100) { sections { crn course { code offered_sections(limit: 100) { sections { crn title } } } } } }"
    assert query_cost(parse(costly), {}) > MAX_COST
    message = _tool_error(await _tool(demo_campus, costly))
    assert "cost limit" in message and str(MAX_COST) in message and "smaller `limit`" in message


async def test_a_page_too_large_names_the_page_limit(demo_campus: CampusHarness) -> None:
    message = _tool_error(await _tool(demo_campus, "{ sections(limit: 500) { total } }"))
    assert "limit" in message and "100" in message


async def test_one_search_by_meaning_per_query(demo_campus: CampusHarness) -> None:
    one = '{ courses(q: "the stock market", semantic: true, limit: 1) { courses { code } } }'
    result = await _tool(demo_campus, one)
    assert not result.is_error
    assert result.structured_content["data"]["courses"]["courses"][0]["code"] == "FINC 3300"

    two = (
        '{ a: courses(q: "the stock market", semantic: true, limit: 1) { total }'
        ' b: reviews(q: "helpful", semantic: true, limit: 1) { total } }'
    )
    result = await _tool(demo_campus, two)
    answer = result.structured_content if not result.is_error else {"errors": [{"message": _tool_error(result)}]}
    messages = " ".join(e["message"] for e in answer["errors"])
    assert "one search by meaning" in messages


async def test_a_bad_argument_says_what_to_change(demo_campus: CampusHarness) -> None:
    message = _tool_error(await _tool(demo_campus, '{ section(crn: "12") { crn } }'))
    assert "is not a CRN" in message
    message = _tool_error(await _tool(demo_campus, "{ sections { nonsense } }"))
    assert "nonsense" in message


def test_cost_counts_fields_per_item_of_each_page() -> None:
    assert query_cost(parse("{ terms { terms { uid } } }"), {}) == 3
    assert query_cost(parse("{ sections(limit: 10) { total sections { crn } } }"), {}) == 1 + 10 * 3
    assert query_cost(parse("query($n: Int) { sections(limit: $n) { total } }"), {"n": 4}) == 1 + 4
