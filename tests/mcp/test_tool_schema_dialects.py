"""Input schemas every client's dialect reads (issue 24, point 14; docs/tool-schema-dialects.md).

tools/list, read with the SDK client: no input schema gives ``type`` as a list (Gemini's function
declarations take one type; ``inspector --strict`` warned on each ``["string", "null"]``), and a
field that may be null says so with ``anyOf`` of its type and null, which Claude's, OpenAI's strict
and Gemini's dialects all take. Output schemas, read by a client's validator and not filled by a
model, are not typed at all: each key with a note keeps only its note (campus_mcp.mcp.compact_schema).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from campus_mcp.testing import CampusHarness


def type_lists(schema: Any, path: str = "") -> Iterator[str]:
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            yield path or "/"
        for key, value in schema.items():
            yield from type_lists(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for number, value in enumerate(schema):
            yield from type_lists(value, f"{path}/{number}")


async def test_no_input_schema_lists_types_and_nullable_fields_say_anyof(demo_campus: CampusHarness) -> None:
    async with demo_campus.mcp() as client:
        tools = (await client.list_tools()).tools
    listed = {tool.name: tool for tool in tools}
    found = [f"{name}{path}" for name, tool in listed.items() for path in type_lists(tool.input_schema)]
    assert found == []
    term = listed["search_sections"].input_schema["properties"]["term"]
    assert term["anyOf"] == [{"type": "string"}, {"type": "null"}]
    # A nullable field is never required: leaving it out is how a single-type client says "none".
    for name, tool in listed.items():
        required = set(tool.input_schema.get("required", []))
        for field, schema in tool.input_schema.get("properties", {}).items():
            if {"type": "null"} in schema.get("anyOf", []):
                assert field not in required, f"{name}.{field}"
    # The decision is written down where the README points.
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "(docs/tool-schema-dialects.md)" in readme
    # Output schemas list only the keys with a note, without types (the answer shows them).
    assert [t.name for t in tools if t.output_schema and any(type_lists(t.output_schema))] == []
    next_offset = listed["search_sections"].output_schema["properties"]["next_offset"]
    assert next_offset == {"description": "Pass as offset for the next page; null: the last page."}
