"""A GraphQL query reads its links per page, not per item (issue 30): a query near the cost limit
sends a handful of statements, as many as a query of two results, and its links answer exactly
what ``get_course`` and ``search_sections`` answer (before, one get_course per section and one
search per course: about 1,500 statements for the query below, and a connection held seconds).

Run on the demo campus through ``run_graphql``, the function the REST route and the tool call;
the statements are counted on the engine (``before_cursor_execute``).
"""

from __future__ import annotations

from typing import Any

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.graphql import MAX_COST, query_cost, run_graphql
from campus_catalog.graphql_io import GraphQLRequest
from campus_catalog.queries import courses, sections
from campus_catalog.schemas import CourseLookup, SectionSearch
from campus_mcp import InvalidInput
from campus_mcp.testing import CampusHarness
from graphql import parse
from sqlalchemy import event

COURSE_FIELDS = (
    "code title school credits_min terms_offered prerequisites unlocks { code title } "
    "offered_in { term { uid } section_count }"
)
SECTION_FIELDS = "crn title section_number meetings { days start } instructors open_seats course { code }"


def linked(sections_limit: int, offered_limit: int) -> str:
    """Sections, each with its course, that course's sections, and each of those's course."""
    return (
        f"{{ sections(limit: {sections_limit}) {{ total sections {{ crn course {{ {COURSE_FIELDS} "
        f"offered_sections(limit: {offered_limit}) {{ total next_offset term {{ uid name }} "
        f"sections {{ {SECTION_FIELDS} }} }} }} }} }} }}"
    )


# Near the cost limit: 50 sections, their courses, ten sections of each and their courses.
WIDE = linked(50, 10)
MEDIUM = linked(10, 10)
NARROW = linked(2, 2)


async def _answered(campus: CampusHarness, query: str) -> tuple[dict[str, Any], int]:
    """The query's data, and how many statements it sent."""
    engine = campus.deployment.engine.sync_engine
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        async with campus.sessions() as session:
            answer = await run_graphql(session, GraphQLRequest(query=query), campus.settings, CatalogSettings())
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert answer.errors is None, answer.errors
    assert answer.data is not None
    return answer.data, len(sent)


def test_the_wide_query_is_near_the_cost_limit() -> None:
    assert MAX_COST * 8 // 10 < query_cost(parse(WIDE), {}) <= MAX_COST


async def test_a_query_near_the_cost_limit_sends_as_few_statements_as_a_small_one(demo_campus: CampusHarness) -> None:
    await _answered(demo_campus, NARROW)  # the terms and subjects, read once per process, are read
    narrow, narrow_sent = await _answered(demo_campus, NARROW)
    _, medium_sent = await _answered(demo_campus, MEDIUM)
    wide, wide_sent = await _answered(demo_campus, WIDE)
    found = wide["sections"]["sections"]
    assert len(found) == 50
    assert sum(len(s["course"]["offered_sections"]["sections"]) for s in found) > 200
    # The page; its courses (their rows, what they unlock, their prerequisites' titles: none
    # to read for the two first courses); their sections; and those sections' courses, already
    # read; and the catalog's data versions (held tables compare them on every call without the
    # answer cache, as a GraphQL query is). As many for 200 results as for 2,000.
    assert narrow_sent <= medium_sent == wide_sent <= 6, (narrow_sent, medium_sent, wide_sent)
    assert narrow["sections"]["sections"], narrow


def _only(answer: Any, selected: Any) -> Any:
    """``answer`` cut down to the fields the query selected (``selected`` is the GraphQL answer)."""
    if isinstance(selected, dict) and isinstance(answer, dict):
        return {key: _only(answer.get(key), value) for key, value in selected.items()}
    if isinstance(selected, list) and isinstance(answer, list) and len(selected) == len(answer):
        return [_only(a, s) for a, s in zip(answer, selected, strict=True)]
    return answer


async def test_the_links_answer_what_get_course_and_search_sections_answer(demo_campus: CampusHarness) -> None:
    data, _ = await _answered(demo_campus, WIDE)
    found = data["sections"]["sections"]
    assert any(s["course"]["unlocks"] for s in found), "the page should have a course that unlocks others"
    assert any(s["course"]["prerequisites"] for s in found), "the page should have a course with prerequisites"
    catalog = CatalogSettings()
    async with demo_campus.sessions() as session:
        for section in found:
            course = dict(section["course"])
            offered_page = course.pop("offered_sections")
            lookup = CourseLookup(code=course["code"])
            direct = await courses.get_course(session, lookup, demo_campus.settings, catalog)
            assert _only(direct.model_dump(mode="json"), course) == course, course["code"]
            # The link's sections carry their course as well (a GraphQL-only field).
            assert {s["course"]["code"] for s in offered_page["sections"]} <= {course["code"]}
            shown = {**offered_page, "sections": [_without("course", s) for s in offered_page["sections"]]}
            subject, number = course["code"].split(" ", 1)
            search = SectionSearch(subject=subject, course_number=number, limit=10)
            page = await sections.search_sections(session, search, demo_campus.settings, catalog)
            assert _only(page.model_dump(mode="json"), shown) == shown, course["code"]


def _without(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if name != key}


async def test_a_links_bad_argument_is_answered_in_words(demo_campus: CampusHarness) -> None:
    """Every course's link fails alike; the fields are not nullable, so the whole query is refused
    with the words once (as before the links were read per page)."""
    query = (
        '{ sections(limit: 3) { sections { crn course { code offered_sections(term: "Winter 1850") { total } } } } }'
    )
    async with demo_campus.sessions() as session:
        with pytest.raises(InvalidInput) as refused:
            await run_graphql(session, GraphQLRequest(query=query), demo_campus.settings, CatalogSettings())
    assert refused.value.message.startswith("Unknown term 'Winter 1850'. Pass a term uid or name from list_terms")
    assert refused.value.message.count("Unknown term") == 1
