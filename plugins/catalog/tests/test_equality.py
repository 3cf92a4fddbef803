"""The REST API, GraphQL and the MCP tools give the same answer to the same question (seed 000:
"the MCP server, the REST API, and GraphQL give the same answers"), checked for every pair.

GraphQL selects every field of the answer type (not the GraphQL-only links), so the comparison
is of whole answers, not of a few keys. The tool's ``advisory`` is the one key the tool adds.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from campus_catalog import models as m
from campus_catalog.graphql import LINK_FIELDS, SCHEMA
from campus_catalog.operations import BY_NAME
from campus_mcp.testing import CampusHarness
from graphql import GraphQLObjectType, get_named_type
from sqlalchemy import select


def selection(type_name: str, depth: int = 0) -> str:
    """Every field of a GraphQL type, recursively (JSON fields are leaves)."""
    object_type = SCHEMA._schema.type_map[type_name]
    assert isinstance(object_type, GraphQLObjectType)
    parts = []
    for name, field in object_type.fields.items():
        if name in LINK_FIELDS:
            continue
        inner = get_named_type(field.type)
        parts.append(f"{name} {selection(inner.name, depth + 1)}" if isinstance(inner, GraphQLObjectType) else name)
    return "{ " + " ".join(parts) + " }"


def graphql_arguments(arguments: dict[str, Any]) -> str:
    if not arguments:
        return ""
    return "(" + ", ".join(f"{key}: {json.dumps(value)}" for key, value in arguments.items()) + ")"


def rest_url(path: str, arguments: dict[str, Any]) -> str:
    query = urlencode(
        [
            (k, str(v).lower() if isinstance(v, bool) else v)
            for k, value in arguments.items()
            for v in (value if isinstance(value, list) else [value])
        ]
    )
    return f"{path}?{query}" if query else path


def _case(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any], str, str, str]:
    """tool, arguments, REST path (its parameters filled), GraphQL field, GraphQL answer type."""
    row = BY_NAME[tool]
    path = row.operation.path or ""
    for name in row.operation.path_parameters:
        path = path.replace("{" + name + "}", quote(str(arguments[name])))
    assert row.graphql is not None, f"{tool} has no GraphQL field"
    return tool, arguments, path, row.graphql, row.operation.output_model.__name__


async def test_rest_graphql_and_tools_give_the_same_answers(campus_factory) -> None:  # type: ignore[no-untyped-def]
    campus: CampusHarness = await campus_factory(demo=True)
    async with campus.sessions() as session:
        crns = (
            (
                await session.execute(
                    select(m.Section.crn)
                    .join(m.Term, m.Term.id == m.Section.term_id)
                    .where(m.Section.cancelled.is_(False), m.Section.schedule_type == "Lecture")
                    .order_by(m.Term.start_date.desc(), m.Section.id)
                    .limit(2)
                )
            )
            .scalars()
            .all()
        )
        pub_id = (await session.execute(select(m.Instructor.pub_id).order_by(m.Instructor.id).limit(1))).scalar_one()
    await campus.deployment.engine.dispose()

    # tool and arguments; the REST path, the GraphQL field and its answer type are the tool's
    # row of the catalog's one table of operations.
    asked: list[tuple[str, dict[str, Any]]] = [
        ("list_terms", {}),
        ("list_subjects", {}),
        ("search_sections", {"subject": "COMP", "open_only": True, "limit": 5}),
        ("search_sections", {"days": "TR", "begins_after": "10:00", "limit": 4}),
        ("search_sections", {"q": "the stock market", "semantic": True, "limit": 3}),
        ("get_section", {"crn": crns[0]}),
        ("search_courses", {"q": "calculus"}),
        ("get_course", {"code": "COMP 1000"}),
        ("check_schedule", {"crns": list(crns)}),
        ("search_instructors", {"subject": "COMP", "limit": 5}),
        ("get_instructor", {"pub_id": pub_id}),
        ("search_reviews", {"sentiment": "negative", "limit": 5}),
    ]
    cases = [_case(tool, arguments) for tool, arguments in asked]
    path_arguments = {tool: set(BY_NAME[tool].operation.path_parameters) for tool, _ in asked}

    rest: list[Any] = []
    async with campus.rest() as client:
        for tool, arguments, path, _, _ in cases:
            query = {k: v for k, v in arguments.items() if k not in path_arguments.get(tool, set())}
            response = await client.get(rest_url(path, query))
            assert response.status_code == 200, (tool, response.text)
            rest.append(response.json())
    await campus.deployment.engine.dispose()

    for (tool, arguments, _, field, type_name), rest_answer in zip(cases, rest, strict=True):
        result = await campus.call(tool, arguments, scopes=["catalog"])
        assert not result.is_error, (tool, result.content)
        tool_answer = {k: v for k, v in (result.structured_content or {}).items() if k != "advisory"}

        query = "{ " + field + graphql_arguments(arguments) + " " + selection(type_name) + " }"
        graphql = await campus.call("catalog_graphql", {"query": query}, scopes=["catalog"])
        assert not graphql.is_error, (tool, graphql.content)
        assert graphql.structured_content is not None
        assert graphql.structured_content.get("errors") is None, graphql.structured_content["errors"]
        graphql_answer = graphql.structured_content["data"][field]

        assert rest_answer == tool_answer, f"REST and the {tool} tool differ"
        assert rest_answer == graphql_answer, f"REST and GraphQL {field} differ"
        assert tool_answer == graphql_answer, f"the {tool} tool and GraphQL {field} differ"
