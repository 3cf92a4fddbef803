"""Print the README's settings table: every ``CAMPUS_MCP_*`` variable of the host and the plugins.

    .venv/bin/python scripts/settings_table.py            print the Markdown table
    .venv/bin/python scripts/settings_table.py --check    exit 1 naming any variable README.md lacks
    .venv/bin/python scripts/settings_table.py --write    rewrite the table in README.md

``--write`` replaces the table between the README's ``settings-table`` markers. A setting whose
field has no description keeps the description written by hand in the README.

A plugin declares its settings as a ``PluginSettings`` model in ``PluginInfo(settings_model=...)``;
each field ``key`` is the variable ``CAMPUS_MCP_<PLUGIN>_<KEY>`` and the TOML key
``[plugins.<plugin>] key``. Loading the registry imports every installed plugin, so the models are
found without a list to keep up to date; a value in the environment that does not validate does
not stop the table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from campus_mcp.assembly.registry import PluginError, _collect, build_plugin_manager, load_registry
from campus_mcp.base.settings import Settings
from campus_mcp.plugin.contributions import PluginInfo
from campus_mcp.plugin.settings import env_variable, toml_key
from pydantic import BaseModel
from pydantic.fields import FieldInfo

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN = "<!-- settings-table -->"
END = "<!-- /settings-table -->"


# variable, TOML key, owner, default, description
Row = tuple[str, str, str, str, str]


def plugin_models() -> list[tuple[str, type[BaseModel]]]:
    """Every installed plugin's settings model, by plugin name (this imports every plugin)."""
    settings = Settings(plugins=None, disable=[])
    try:
        infos: Iterable[PluginInfo] = load_registry(settings).plugins.values()
    except PluginError:
        # A value in this shell's environment that does not validate: the table needs none of them.
        infos = _collect(build_plugin_manager(settings), "campus_plugin_info", settings)
    return sorted((info.name, info.settings_model) for info in infos if info.settings_model is not None)


# Secrets whose default is no secret: the demo students' password is the one the README tells
# everyone to try the demo with, so the table says it too rather than "(secret)".
PUBLISHED_DEFAULTS = {"CAMPUS_MCP_DEMO_PASSWORD"}


def default_text(field: FieldInfo, *, published: bool = False) -> str:
    if field.default_factory is not None:
        value: Any = field.default_factory()  # type: ignore[call-arg]
    else:
        value = field.default
    if hasattr(value, "get_secret_value"):
        if published:
            value = value.get_secret_value()
        else:
            return "(secret)" if value.get_secret_value() else "(unset)"
    if value is None or value == "" or value == []:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows() -> list[Row]:
    table: list[Row] = []
    prefix = str(Settings.model_config.get("env_prefix", ""))
    for name, field in Settings.model_fields.items():
        variable = f"{prefix}{name.upper()}"
        default = default_text(field, published=variable in PUBLISHED_DEFAULTS)
        table.append((variable, name, "host", default, cell(field.description or "")))
    for plugin, model in plugin_models():
        for name, field in model.model_fields.items():
            variable = env_variable(plugin, name)
            table.append((variable, toml_key(plugin, name), plugin, default_text(field), cell(field.description or "")))
    return table


def render(table: list[Row], hand_written: dict[str, str]) -> str:
    lines = ["| variable | TOML key | from | default | what it does |", "| --- | --- | --- | --- | --- |"]
    for variable, key, owner, default, description in table:
        text = description or hand_written.get(variable, "")
        toml = f"`{key}`" if key else "-"
        lines.append(f"| `{variable}` | {toml} | {owner} | `{default}` | {text} |")
    return "\n".join(lines)


def readme_descriptions(readme: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) in (4, 5) and cells[0].startswith("`CAMPUS_MCP_"):
            found[cells[0].strip("`")] = cells[-1]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if README.md misses a variable")
    mode.add_argument("--write", action="store_true", help="rewrite the table in README.md")
    args = parser.parse_args()
    table = rows()
    readme = README.read_text()
    if args.check:
        lines = {
            line.split(" | ")[0].strip("| `"): line for line in readme.splitlines() if line.startswith("| `CAMPUS_MCP_")
        }
        # A variable without its row, or a plugin setting whose row lacks its TOML key.
        missing = [
            variable
            for variable, key, *_ in table
            if variable not in lines or (key and f"`{key}`" not in lines[variable])
        ]
        if missing:
            print("README.md does not list: " + ", ".join(missing), file=sys.stderr)
            print("Rewrite its table: .venv/bin/python scripts/settings_table.py --write", file=sys.stderr)
            return 1
        print(f"README.md lists all {len(table)} settings.")
        return 0
    rendered = render(table, readme_descriptions(readme))
    if args.write:
        if BEGIN not in readme or END not in readme:
            print(f"README.md has no {BEGIN} ... {END} markers", file=sys.stderr)
            return 1
        head, rest = readme.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        README.write_text(f"{head}{BEGIN}\n{rendered}\n{END}{tail}")
        print(f"README.md: {len(table)} settings.")
        return 0
    print(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
