"""The README's plugin table says what each family contributes today, from the registry itself.

Each family's row names exactly its tools; the apps and prompts rows name their views and prompts;
no row still calls a family an empty shell. The Inspector's sentence says it needs Node 22 (npm
picks the old 0.15 on Node 20).
"""

from __future__ import annotations

import re
from pathlib import Path

from campus_mcp.assembly.registry import load_registry
from campus_mcp.testing import test_settings as campus_settings

README = (Path(__file__).parents[1] / "README.md").read_text()


def table_rows() -> dict[str, str]:
    rows = {}
    for line in README.splitlines():
        found = re.match(r"\| `(\w+)` \| `(?:plugins|examples)/\w+` \|", line)
        if found:
            rows[found.group(1)] = line.rsplit("|", 2)[1]
    return rows


def named(cell: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", cell))


def test_each_family_row_names_what_it_contributes() -> None:
    registry = load_registry(campus_settings("sqlite+aiosqlite:///:memory:"))
    rows = table_rows()
    assert set(registry.plugins) - {"core"} <= set(rows), set(registry.plugins)
    for plugin in rows:
        tools = {name for name, tool in registry.tools.items() if tool.plugin == plugin}
        assert named(rows[plugin]) & set(registry.tools) == tools, plugin
        # A family's prompts are named in its own row (the prompts family's, and canvas's plan_my_week).
        prompts = {name for name, prompt in registry.prompts.items() if prompt.plugin == plugin}
        assert named(rows[plugin]) & set(registry.prompts) == prompts, plugin
    assert named(rows["apps"]) == set(registry.app_resources)
    assert "shell" not in "".join(rows.values())


def test_the_inspector_sentence_says_node_22() -> None:
    (sentence,) = [p for p in README.split("\n\n") if p.startswith("**The MCP Inspector**")]
    assert "Node 22" in sentence and "0.15" in sentence
