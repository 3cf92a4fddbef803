"""Print the README's settings table: every ``CAMPUS_MCP_*`` variable of the host and the plugins.

    .venv/bin/python scripts/settings_table.py            print the Markdown table
    .venv/bin/python scripts/settings_table.py --check    exit 1 naming any variable README.md lacks
    .venv/bin/python scripts/settings_table.py --write    rewrite the table in README.md

``--write`` replaces the table between the README's ``settings-table`` markers. A setting whose
field has no description keeps the description written by hand in the README.

Plugins declare their settings as pydantic ``BaseSettings`` classes with a ``CAMPUS_MCP_<PLUGIN>_``
prefix; loading the registry imports every installed plugin, so their classes are found here
without a list to keep up to date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from campus_mcp.registry import load_registry
from campus_mcp.settings import Settings
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN = "<!-- settings-table -->"
END = "<!-- /settings-table -->"


def settings_classes() -> list[type[BaseSettings]]:
    load_registry(Settings(plugins=None, disable=[]))  # imports every installed plugin
    found: list[type[BaseSettings]] = []
    pending: list[type[BaseSettings]] = list(BaseSettings.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        prefix = str(cls.model_config.get("env_prefix", ""))
        if prefix.startswith("CAMPUS_MCP_") and cls not in found:
            found.append(cls)
    # The host first, then the plugins by prefix.
    return sorted(found, key=lambda c: (c is not Settings, str(c.model_config.get("env_prefix", ""))))


def default_text(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value: Any = field.default_factory()  # type: ignore[call-arg]
    else:
        value = field.default
    if hasattr(value, "get_secret_value"):
        return "(secret)" if value.get_secret_value() else "(unset)"
    if value is None or value == "" or value == []:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def rows() -> list[tuple[str, str, str, str]]:
    table: list[tuple[str, str, str, str]] = []
    for cls in settings_classes():
        prefix = str(cls.model_config.get("env_prefix", ""))
        owner = "host" if cls is Settings else cls.__module__.split(".")[0].removeprefix("campus_")
        for name, field in cls.model_fields.items():
            description = (field.description or "").replace("|", "\\|").replace("\n", " ")
            table.append((f"{prefix}{name.upper()}", owner, default_text(field), description))
    return table


def render(table: list[tuple[str, str, str, str]], hand_written: dict[str, str]) -> str:
    lines = ["| variable | from | default | what it does |", "| --- | --- | --- | --- |"]
    for variable, owner, default, description in table:
        text = description or hand_written.get(variable, "")
        lines.append(f"| `{variable}` | {owner} | `{default}` | {text} |")
    return "\n".join(lines)


def readme_descriptions(readme: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) == 4 and cells[0].startswith("`CAMPUS_MCP_"):
            found[cells[0].strip("`")] = cells[3]
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
        missing = [variable for variable, *_ in table if f"`{variable}`" not in readme]
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
