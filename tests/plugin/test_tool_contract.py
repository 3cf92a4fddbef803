"""The contract every tool of every installed plugin keeps (issue 2, point 9; DESIGN section 10).

The per-tool checks live in the kit (``campus_mcp.testing.contract``), so that a third-party plugin runs
the same ones with one line in its tests. Here they run for every installed plugin, read from the
registry at collection time, so a plugin installed into the virtualenv is covered by the next run
with no change here: description length, SEP-986 name, annotations, parity entry and parity check,
valid object schemas, demo and sparse examples validated against the listed ``outputSchema``
through the real MCP client, the permission error for a token without the scope, documented hooks.

The tests that only make sense across plugins stay here: something contributes tools, tools/list
lists exactly the registered tools, no example names a tool nobody registers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from campus_mcp import Principal
from campus_mcp.testing import CampusHarness, plugin_contract
from campus_mcp.testing.contract import collection_registry, hook_problems

REGISTRY = collection_registry()
TOOLS = sorted(REGISTRY.tools)
EXAMPLES = list(REGISTRY.tool_examples)

ROOT = Path(__file__).resolve().parents[2]
# Plugins of this repository whose own tests carry the contract line: run there, not twice.
OWN_LINE = {
    "catalog": ROOT / "plugins" / "catalog" / "tests" / "test_catalog_tool_contract.py",
    "dining": ROOT / "examples" / "dining" / "tests" / "test_dining_contract.py",
}

# One contract class per other installed plugin (a third-party plugin in the virtualenv included).
for _plugin in sorted(set(REGISTRY.plugins) - set(OWN_LINE)):
    _contract = plugin_contract(_plugin)
    globals()[_contract.__name__] = _contract


@pytest.mark.parametrize("plugin", sorted(OWN_LINE))
def test_the_plugins_left_out_here_run_the_contract_in_their_own_tests(plugin: str) -> None:
    line = f'plugin_contract("{plugin}")'
    assert line in OWN_LINE[plugin].read_text(encoding="utf-8"), f"{OWN_LINE[plugin].name} lost the line {line}"


def test_the_installed_plugins_have_tools() -> None:
    assert TOOLS, "no installed plugin contributes a tool: is anything installed?"


async def test_every_tool_is_listed(demo_campus: CampusHarness) -> None:
    everyone = Principal(user_id=1, username="student1", client_id="contract-tests", scopes=frozenset(REGISTRY.scopes))
    async with demo_campus.mcp(principal=everyone) as client:
        listed = sorted(tool.name for tool in (await client.list_tools()).tools)
    assert listed == TOOLS


def test_every_example_names_an_installed_tool() -> None:
    strays = [f"{e.tool} ({e.plugin})" for e in EXAMPLES if e.tool not in REGISTRY.tools]
    assert strays == [], f"examples of tools that are not registered: {strays}"


def test_an_unknown_plugin_name_says_which_are_installed() -> None:
    with pytest.raises(LookupError) as refused:
        plugin_contract("dinning")
    assert "'dinning'" in str(refused.value) and "dining" in str(refused.value)


class MisspelledHooks:
    """A plugin whose author forgot @hookimpl on one hook and misspelled another as an optional hook."""

    def register_tools(self) -> list[object]:
        return []

    def opening_hours(self) -> list[str]:  # a helper that is not named like a hook: not reported
        return []


def test_a_hook_without_hookimpl_and_an_undocumented_hook_are_named() -> None:
    from campus_mcp import hookimpl

    plugin = MisspelledHooks()

    @hookimpl(optionalhook=True)
    def register_tool(settings: object) -> list[object]:
        return []

    plugin.register_tool = register_tool  # type: ignore[attr-defined]
    problems = hook_problems(plugin, "rooms")
    assert any("register_tools() has the name of a hook but no @hookimpl" in p for p in problems), problems
    assert any("'register_tool', which is not a Campus MCP hook" in p for p in problems), problems
