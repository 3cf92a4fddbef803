"""The contract every tool of every installed plugin keeps (issue 2, point 9; DESIGN section 10).

The tools are read from the registry at collection time, so a tool a plugin adds is covered by
its next test run with no change here. For each tool:

- its listed description fits in 2,048 characters and its name is a valid SEP-986 tool name;
- read tools say ``readOnlyHint``; write tools are neither read-only nor destructive, and need a
  scope that is marked as writing;
- it has a parity entry: a REST route it mirrors, or a written reason why it has none;
- its input and output schemas are valid JSON Schemas of objects;
- it has at least one example on the demo campus (``register_tool_examples``), and its plugin
  has sparse examples;
- a token without the tool's scope gets the permission error naming the scope.

And every example, made through the real MCP client, succeeds, and its structured result
validates (JSON Schema 2020-12) against the ``outputSchema`` that ``tools/list`` gives: on the
demo campus, and for sparse examples on an empty campus that the example's ``prepare`` filled.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from campus_mcp import Principal, ToolExample, testing
from campus_mcp.principal import ANONYMOUS
from campus_mcp.registry import load_registry
from campus_mcp.testing import CampusFactory, CampusHarness
from jsonschema import Draft202012Validator
from mcp.shared.tool_name_validation import validate_tool_name
from mcp_types import Tool as ListedTool

# The same settings the demo_campus fixture uses; the database is never opened here.
REGISTRY = load_registry(testing.test_settings("sqlite+aiosqlite:///never-opened.db"))
TOOLS = sorted(REGISTRY.tools)
EXAMPLES = list(REGISTRY.tool_examples)
MAX_DESCRIPTION = 2048


def example_id(example: ToolExample) -> str:
    same = [e for e in EXAMPLES if e.tool == example.tool and e.data == example.data]
    return f"{example.tool}-{example.data}-{same.index(example) + 1}"


def demo_examples(tool: str) -> list[ToolExample]:
    return [e for e in EXAMPLES if e.tool == tool and e.data == "demo"]


async def principal_for(campus: CampusHarness, username: str | None, *, create: bool = False) -> Principal:
    """The demo student ``username`` holding every scope; anonymous for None."""
    if username is None:
        return ANONYMOUS
    from campus_mcp.accounts import Student, student_by_username

    async with campus.sessions() as session:
        student = await student_by_username(session, username)
        if student is None and create:
            # Sparse data has no demo students: the example's student is created before `prepare`.
            student = Student(username=username, display_name=username, is_demo=True)
            session.add(student)
            await session.commit()
        assert student is not None, f"the demo campus has no student {username!r}"
        return Principal(
            user_id=student.id,
            username=username,
            client_id="contract-tests",
            scopes=frozenset(campus.registry.scopes),
        )


@pytest.fixture(scope="module")
async def listed(demo_campus: CampusHarness) -> dict[str, ListedTool]:
    """The tools as a signed-in client with every scope sees them in tools/list."""
    everyone = Principal(user_id=1, username="student1", client_id="contract-tests", scopes=frozenset(REGISTRY.scopes))
    async with demo_campus.mcp(principal=everyone) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def test_the_installed_plugins_have_tools() -> None:
    assert TOOLS, "no installed plugin contributes a tool: is anything installed?"


def test_every_tool_is_listed(listed: dict[str, ListedTool]) -> None:
    assert sorted(listed) == TOOLS


@pytest.mark.parametrize("name", TOOLS)
def test_description_fits_in_2048_characters(name: str, listed: dict[str, ListedTool]) -> None:
    description = listed[name].description or ""
    assert description.strip(), f"{name} has no description"
    assert len(description) <= MAX_DESCRIPTION, f"{name}'s listed description has {len(description)} characters"


@pytest.mark.parametrize("name", TOOLS)
def test_tool_name_is_valid(name: str) -> None:
    result = validate_tool_name(name)
    assert result.is_valid, f"{name!r}: {'; '.join(result.warnings)}"


@pytest.mark.parametrize("name", TOOLS)
def test_annotations_say_whether_the_tool_writes(name: str, listed: dict[str, ListedTool]) -> None:
    tool = REGISTRY.tools[name]
    annotations = listed[name].annotations
    assert annotations is not None, f"{name} has no annotations"
    if tool.writes:
        assert annotations.read_only_hint is False, f"write tool {name} is marked read-only"
        assert annotations.destructive_hint is False, f"write tool {name} is marked destructive"
        assert REGISTRY.scopes[tool.scope].writes, f"write tool {name} needs the read scope {tool.scope!r}"
    else:
        assert annotations.read_only_hint is True, f"read tool {name} lacks readOnlyHint"


@pytest.mark.parametrize("name", TOOLS)
def test_schemas_are_valid_json_schemas_of_objects(name: str, listed: dict[str, ListedTool]) -> None:
    tool = listed[name]
    for kind, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
        assert schema is not None, f"{name} lists no {kind}"
        Draft202012Validator.check_schema(schema)
        # MCP requires both to describe a JSON object (the arguments, the structured result).
        assert schema.get("type") == "object", f"{name}'s {kind} is not an object schema"


@pytest.mark.parametrize("plugin", sorted({tool.plugin for tool in REGISTRY.tools.values()}))
def test_plugin_supplies_sparse_examples(plugin: str) -> None:
    sparse = [e for e in EXAMPLES if e.plugin == plugin and e.data == "sparse"]
    assert sparse, (
        f"{plugin} has tools but no sparse example: add ToolExample(data='sparse', prepare=...) "
        "calls whose prepare inserts rows with null fields and empty lists"
    )


@pytest.mark.parametrize("name", TOOLS)
def test_tool_has_a_parity_entry(name: str) -> None:
    tool = REGISTRY.tools[name]
    assert tool.mirrors or tool.no_route_reason.strip(), (
        f"{name} ({tool.plugin}) mirrors no REST route and gives no reason (Tool.mirrors or Tool.no_route_reason)"
    )


@pytest.mark.parametrize("name", TOOLS)
def test_tool_has_an_example_on_the_demo_campus(name: str) -> None:
    assert demo_examples(name), (
        f"{name} ({REGISTRY.tools[name].plugin}) has no ToolExample on demo data; "
        "add one in the plugin's register_tool_examples"
    )


@pytest.mark.parametrize("name", TOOLS)
async def test_a_token_without_the_scope_gets_the_permission_error(
    name: str, demo_campus: CampusHarness, campus_factory: CampusFactory
) -> None:
    tool = REGISTRY.tools[name]
    scope = REGISTRY.scopes[tool.scope]
    examples = demo_examples(name)
    assert examples, f"{name} has no demo example to call it with"
    example = examples[0]
    # The scope is checked before a handler runs; a write tool still gets its own campus in case it is not.
    campus = await campus_factory(demo=True) if tool.writes else demo_campus
    student = await principal_for(campus, example.user or "student1")
    without = Principal(
        user_id=student.user_id,
        username=student.username,
        client_id="contract-tests",
        scopes=frozenset(REGISTRY.scopes) - {tool.scope},
    )
    async with campus.mcp(principal=without) as client:
        result = await client.call_tool(name, dict(example.arguments))
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    if scope.always_on:
        # Public data: no token grants or withholds it.
        assert not result.is_error, f"{name} (always-on scope {scope.name!r}) failed: {text}"
    else:
        assert result.is_error, f"{name} ran for a token without {scope.name!r}"
        assert f"'{scope.name}'" in text, f"{name}'s permission error does not name the scope: {text}"


def assert_valid_against_listed_schema(example: ToolExample, listed_tool: ListedTool, result: Any) -> None:
    text = result.content[0].text if result.content else ""
    assert not result.is_error, f"example {example_id(example)} failed: {text}"
    structured = result.structured_content
    assert isinstance(structured, dict), f"example {example_id(example)} returned no structuredContent"
    assert json.loads(text) == structured, "the text content is not the JSON of structuredContent"
    schema = listed_tool.output_schema
    assert schema is not None, f"{example.tool} lists no outputSchema"
    Draft202012Validator.check_schema(schema)
    errors = sorted(Draft202012Validator(schema).iter_errors(structured), key=lambda e: list(e.absolute_path))
    assert not errors, f"{example_id(example)} does not match its outputSchema:\n" + "\n".join(
        f"  at /{'/'.join(str(p) for p in error.absolute_path)}: {error.message[:300]}" for error in errors[:10]
    )


async def call_example(campus: CampusHarness, example: ToolExample, principal: Principal) -> None:
    async with campus.mcp(principal=principal) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert example.tool in tools, f"{example.tool} is not listed for {principal.username or 'an anonymous caller'}"
        result = await client.call_tool(example.tool, dict(example.arguments))
    assert_valid_against_listed_schema(example, tools[example.tool], result)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.data == "demo"], ids=example_id)
async def test_demo_example_matches_the_output_schema(
    example: ToolExample, demo_campus: CampusHarness, campus_factory: CampusFactory
) -> None:
    # Write tools change data, so they get a campus of their own; reads share the session's.
    campus = await campus_factory(demo=True) if REGISTRY.tools[example.tool].writes else demo_campus
    if example.prepare is not None:
        assert REGISTRY.tools[example.tool].writes, "a demo example of a read tool must not prepare (shared data)"
        async with campus.sessions() as session:
            await example.prepare(session)
    await call_example(campus, example, await principal_for(campus, example.user))


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.data == "sparse"], ids=example_id)
async def test_sparse_example_matches_the_output_schema(example: ToolExample, campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=False)
    principal = await principal_for(campus, example.user, create=True)
    if example.prepare is not None:
        async with campus.sessions() as session:
            await example.prepare(session)
    await call_example(campus, example, principal)


def test_every_example_names_an_installed_tool() -> None:
    strays = [f"{e.tool} ({e.plugin})" for e in EXAMPLES if e.tool not in REGISTRY.tools]
    assert strays == [], f"examples of tools that are not registered: {strays}"
