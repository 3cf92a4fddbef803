"""The contract every tool of a plugin keeps, as a pytest class a plugin's own tests collect.

A plugin's tests add one line::

    from campus_mcp.testing import plugin_contract

    TestDiningContract = plugin_contract("dining")

and pytest runs, over every tool of that installed plugin (read from the registry when the test
module is imported, so a new tool is covered by the next run with no change):

- its listed description fits in 2,048 characters and its name is a valid SEP-986 tool name;
- read tools say ``readOnlyHint``; write tools are neither read-only nor destructive, and need a
  scope that is marked as writing;
- it has a parity entry (a REST route it mirrors, or a written reason why it has none), and the
  parity check finds no problem with the plugin's routes, tools, exemptions or pending entries;
- its input and output schemas are valid JSON Schemas of objects;
- it has at least one example on the demo campus (``register_tool_examples``), and the plugin has
  sparse examples;
- a token without the tool's scope gets the permission error naming the scope;
- every example, made through the real MCP client, succeeds and its structured result validates
  (JSON Schema 2020-12) against the ``outputSchema`` that ``tools/list`` gives: on the demo
  campus, and for sparse examples on an empty campus that the example's ``prepare`` filled;
- every hook the plugin implements is a documented hook (a hookspec), and no function named like
  a hook was left without ``@hookimpl`` (it would silently never run).

The tests use the kit's ``demo_campus`` and ``campus_factory`` fixtures and mark themselves for
pytest-asyncio, so they need none of this repository's pytest settings.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from mcp.shared.tool_name_validation import validate_tool_name
from mcp_types import Tool as ListedTool

from campus_mcp.plugin import hookspecs
from campus_mcp.testing.kit_extra import missing_kit_dependency

try:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # the testing extra's, without stubs
except ModuleNotFoundError as missing:  # campus-mcp without its testing extra
    raise missing_kit_dependency(missing) from missing
from campus_mcp.assembly.parity import check_parity
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.oauth.accounts import Student, student_by_username
from campus_mcp.plugin.contributions import ToolExample
from campus_mcp.plugin.principal import ANONYMOUS, Principal
from campus_mcp.testing.settings import test_settings

MAX_DESCRIPTION = 2048
CLIENT_ID = "contract-tests"
# The kit's fixtures share one event loop per session (demo_campus is session-wide): the tests run on it.
ON_SESSION_LOOP = pytest.mark.asyncio(loop_scope="session")


def collection_registry() -> Registry:
    """Every installed plugin, with the settings the kit's campuses use; no database is opened."""
    return load_registry(test_settings("sqlite+aiosqlite:///never-opened.db"))


def example_id(example: ToolExample, examples: list[ToolExample]) -> str:
    same = [e for e in examples if e.tool == example.tool and e.data == example.data]
    return f"{example.tool}-{example.data}-{same.index(example) + 1}"


def hookspec_names() -> set[str]:
    return {
        name
        for name, function in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(function, f"{hookspecs.PROJECT}_spec")
    }


def hook_problems(plugin: object, plugin_name: str) -> list[str]:
    """What is wrong with the hooks of a plugin object (a module, usually), one line per problem."""
    specs = hookspec_names()
    problems: list[str] = []
    for attribute, value in inspect.getmembers(plugin, callable):
        marker = getattr(value, f"{hookspecs.PROJECT}_impl", None)
        if marker is None:
            if attribute in specs:
                problems.append(
                    f"{plugin_name}: {attribute}() has the name of a hook but no @hookimpl, so the host never calls it"
                )
            continue
        hook = marker.get("specname") or attribute
        if hook not in specs:
            problems.append(
                f"{plugin_name}: @hookimpl {attribute}() implements {hook!r}, which is not a Campus MCP hook "
                f"(docs/hooks.md lists them: {', '.join(sorted(specs))})"
            )
    return problems


def principal_with_every_scope(registry: Registry) -> Principal:
    return Principal(user_id=1, username="student1", client_id=CLIENT_ID, scopes=frozenset(registry.scopes))


async def principal_for(campus: Any, username: str | None, *, create: bool = False) -> Principal:
    """The student ``username`` of ``campus`` (a CampusHarness) holding every scope; anonymous for None."""
    if username is None:
        return ANONYMOUS

    async with campus.sessions() as session:
        student = await student_by_username(session, username)
        if student is None and create:
            # Sparse data has no demo students: the example's student is created before `prepare`.
            student = Student(username=username, display_name=username, is_demo=True)
            session.add(student)
            await session.commit()
        assert student is not None, f"the demo campus has no student {username!r}"
        return Principal(
            user_id=student.id, username=username, client_id=CLIENT_ID, scopes=frozenset(campus.registry.scopes)
        )


# tools/list of a harness, asked once per harness: every per-tool test reads it.
_LISTED: dict[int, dict[str, ListedTool]] = {}


async def listed_tools(campus: Any) -> dict[str, ListedTool]:
    """The tools as a signed-in client with every scope sees them in tools/list."""
    key = id(campus)
    if key not in _LISTED:
        async with campus.mcp(principal=principal_with_every_scope(campus.registry)) as client:
            _LISTED[key] = {tool.name: tool for tool in (await client.list_tools()).tools}
    return _LISTED[key]


def assert_valid_against_listed_schema(label: str, listed_tool: ListedTool, result: Any) -> None:
    text = result.content[0].text if result.content else ""
    assert not result.is_error, f"example {label} failed: {text}"
    structured = result.structured_content
    assert isinstance(structured, dict), f"example {label} returned no structuredContent"
    assert json.loads(text) == structured, "the text content is not the JSON of structuredContent"
    schema = listed_tool.output_schema
    assert schema is not None, f"{listed_tool.name} lists no outputSchema"
    Draft202012Validator.check_schema(schema)
    errors = sorted(Draft202012Validator(schema).iter_errors(structured), key=lambda e: list(e.absolute_path))
    assert not errors, f"{label} does not match its outputSchema:\n" + "\n".join(
        f"  at /{'/'.join(str(p) for p in error.absolute_path)}: {error.message[:300]}" for error in errors[:10]
    )


async def call_example(campus: Any, example: ToolExample, label: str, principal: Principal) -> None:
    async with campus.mcp(principal=principal) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert example.tool in tools, f"{example.tool} is not listed for {principal.username or 'an anonymous caller'}"
        result = await client.call_tool(example.tool, dict(example.arguments))
    assert_valid_against_listed_schema(label, tools[example.tool], result)


def plugin_contract(plugin: str) -> type:
    """A pytest test class checking the contract over every tool of the installed plugin ``plugin``.

    Assign it to a ``Test...`` name in a test module: ``TestDiningContract = plugin_contract("dining")``.
    """
    registry = collection_registry()
    if plugin not in registry.plugins:
        raise LookupError(
            f"plugin_contract({plugin!r}): no enabled installed plugin is called {plugin!r} "
            f"(installed and enabled: {', '.join(sorted(registry.plugins))}). Install the plugin's distribution "
            "(pip install -e .) and use its entry point name."
        )
    tools = sorted(name for name, tool in registry.tools.items() if tool.plugin == plugin)
    examples = [e for e in registry.tool_examples if e.plugin == plugin]
    demo = [e for e in examples if e.data == "demo"]
    sparse = [e for e in examples if e.data == "sparse"]

    def label(example: ToolExample) -> str:
        return example_id(example, examples)

    def demo_examples(tool: str) -> list[ToolExample]:
        return [e for e in demo if e.tool == tool]

    class PluginContract:
        """The tool contract of one plugin (see ``campus_mcp.testing.contract``)."""

        plugin_name = plugin

        @ON_SESSION_LOOP
        async def test_every_tool_is_listed(self, demo_campus: Any) -> None:
            listed = await listed_tools(demo_campus)
            assert [name for name in tools if name not in listed] == []

        @ON_SESSION_LOOP
        @pytest.mark.parametrize("name", tools)
        async def test_description_fits_in_2048_characters(self, name: str, demo_campus: Any) -> None:
            description = (await listed_tools(demo_campus))[name].description or ""
            assert description.strip(), f"{name} has no description"
            assert len(description) <= MAX_DESCRIPTION, f"{name}'s listed description has {len(description)} characters"

        @pytest.mark.parametrize("name", tools)
        def test_tool_name_is_valid(self, name: str) -> None:
            result = validate_tool_name(name)
            assert result.is_valid, f"{name!r}: {'; '.join(result.warnings)}"

        @ON_SESSION_LOOP
        @pytest.mark.parametrize("name", tools)
        async def test_annotations_say_whether_the_tool_writes(self, name: str, demo_campus: Any) -> None:
            tool = registry.tools[name]
            annotations = (await listed_tools(demo_campus))[name].annotations
            assert annotations is not None, f"{name} has no annotations"
            if tool.writes:
                assert annotations.read_only_hint is False, f"write tool {name} is marked read-only"
                assert annotations.destructive_hint is False, f"write tool {name} is marked destructive"
                assert registry.scopes[tool.scope].writes, f"write tool {name} needs the read scope {tool.scope!r}"
            else:
                assert annotations.read_only_hint is True, f"read tool {name} lacks readOnlyHint"

        @ON_SESSION_LOOP
        @pytest.mark.parametrize("name", tools)
        async def test_schemas_are_valid_json_schemas_of_objects(self, name: str, demo_campus: Any) -> None:
            tool = (await listed_tools(demo_campus))[name]
            for kind, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
                assert schema is not None, f"{name} lists no {kind}"
                Draft202012Validator.check_schema(schema)
                # MCP requires both to describe a JSON object (the arguments, the structured result).
                assert schema.get("type") == "object", f"{name}'s {kind} is not an object schema"

        def test_plugin_supplies_sparse_examples(self) -> None:
            if not tools:
                pytest.skip(f"{plugin} registers no tool with these settings")
            assert sparse, (
                f"{plugin} has tools but no sparse example: add ToolExample(data='sparse', prepare=...) "
                "calls whose prepare inserts rows with null fields and empty lists"
            )

        @pytest.mark.parametrize("name", tools)
        def test_tool_has_a_parity_entry(self, name: str) -> None:
            tool = registry.tools[name]
            assert tool.mirrors or tool.no_route_reason.strip(), (
                f"{name} ({tool.plugin}) mirrors no REST route and gives no reason (Tool.mirrors or Tool.no_route_reason)"
            )

        @ON_SESSION_LOOP
        async def test_the_parity_check_passes_for_the_plugin(self, demo_campus: Any) -> None:
            report = check_parity(demo_campus.app, demo_campus.registry, plugin=plugin)
            assert report.ok, f"parity check of {plugin} failed:\n" + "\n".join(report.problems)

        @pytest.mark.parametrize("name", tools)
        def test_tool_has_an_example_on_the_demo_campus(self, name: str) -> None:
            assert demo_examples(name), (
                f"{name} ({plugin}) has no ToolExample on demo data; add one in the plugin's register_tool_examples"
            )

        @ON_SESSION_LOOP
        @pytest.mark.parametrize("name", tools)
        async def test_a_token_without_the_scope_gets_the_permission_error(
            self, name: str, demo_campus: Any, campus_factory: Any
        ) -> None:
            tool = registry.tools[name]
            scope = registry.scopes[tool.scope]
            assert demo_examples(name), f"{name} has no demo example to call it with"
            example = demo_examples(name)[0]
            # The scope is checked before a handler runs; a write tool still gets its own campus in case it is not.
            campus = await campus_factory(demo=True) if tool.writes else demo_campus
            student = await principal_for(campus, example.user or "student1")
            without = Principal(
                user_id=student.user_id,
                username=student.username,
                client_id=CLIENT_ID,
                scopes=frozenset(registry.scopes) - {tool.scope},
            )
            async with campus.mcp(principal=without) as client:
                result = await client.call_tool(name, dict(example.arguments))
            text = result.content[0].text if result.content else ""
            if scope.always_on:
                # Public data: no token grants or withholds it.
                assert not result.is_error, f"{name} (always-on scope {scope.name!r}) failed: {text}"
            else:
                assert result.is_error, f"{name} ran for a token without {scope.name!r}"
                assert f"'{scope.name}'" in text, f"{name}'s permission error does not name the scope: {text}"

        @ON_SESSION_LOOP
        @pytest.mark.parametrize("example", demo, ids=label)
        async def test_demo_example_matches_the_output_schema(
            self, example: ToolExample, demo_campus: Any, campus_factory: Any
        ) -> None:
            # Write tools change data, so they get a campus of their own; reads share the session's.
            # The example's answer is checked, so a client that cannot be asked changes at once
            # (seed 000's "apply"), not after a confirmation code (campus_mcp.mcp.confirmation_code).
            writes = registry.tools[example.tool].writes
            campus = await campus_factory(demo=True, confirmation_fallback="apply") if writes else demo_campus
            if example.prepare is not None:
                assert writes, "a demo example of a read tool must not prepare (shared data)"
                async with campus.sessions() as session:
                    await example.prepare(session)
            await call_example(campus, example, label(example), await principal_for(campus, example.user))

        @ON_SESSION_LOOP
        @pytest.mark.parametrize("example", sparse, ids=label)
        async def test_sparse_example_matches_the_output_schema(
            self, example: ToolExample, campus_factory: Any
        ) -> None:
            campus = await campus_factory(demo=False, confirmation_fallback="apply")  # as above
            principal = await principal_for(campus, example.user, create=True)
            if example.prepare is not None:
                async with campus.sessions() as session:
                    await example.prepare(session)
            await call_example(campus, example, label(example), principal)

        def test_every_example_names_a_tool_of_the_plugin(self) -> None:
            strays = [e.tool for e in examples if e.tool not in tools]
            assert strays == [], f"{plugin} gives examples of tools it does not register: {strays}"

        def test_every_hook_is_a_documented_hook(self) -> None:
            implementation = registry.pm.get_plugin(plugin)
            assert implementation is not None, f"{plugin} is not registered"
            assert hook_problems(implementation, plugin) == []

    title = "".join(part.capitalize() for part in plugin.replace("-", "_").split("_"))
    PluginContract.__name__ = PluginContract.__qualname__ = f"Test{title}Contract"
    return PluginContract
