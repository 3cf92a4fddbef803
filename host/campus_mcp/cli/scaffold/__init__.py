"""``campus-mcp new-plugin``: writes the smallest plugin distribution that is right.

The templates under ``template/`` are plain files with ``${...}`` placeholders (``string.Template``),
so no template engine is needed; a path part ``package`` becomes the Python package and
``__name__`` the plugin name. What they write: one table with its migration branch, one query,
one ``Operation`` (the host makes the tool and its REST twin from it), a public scope, demo data,
examples, tests with the kit's contract line, a README; no settings model, since it needs none.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import string
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).parent / "template"
# One name is the entry point, the CAMPUS_MCP_<NAME>_ prefix, the scope, the revision ids and the
# table prefix: lower-case words joined by single underscores keep it valid in all of them.
NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
MAX_NAME = 30


class ScaffoldError(ValueError):
    """A name or folder new-plugin refuses; the message says what to use instead."""


@dataclass(frozen=True)
class PluginNames:
    """Every name the templates derive from the plugin name ``library_rooms``."""

    name: str

    @property
    def words(self) -> list[str]:
        return self.name.split("_")

    def placeholders(self) -> dict[str, str]:
        title = " ".join(self.words).capitalize()
        return {
            "name": self.name,
            "package": f"campus_{self.name}",
            "distribution": "campus-mcp-" + "-".join(self.words),
            "slug": "-".join(self.words),
            "title": title,
            "lower_title": title.lower(),
            "Class": "".join(word.capitalize() for word in self.words),
            "table": f"{self.name}_items",
            "tool": f"list_{self.name}",
        }


def check_name(name: str, installed: list[str]) -> PluginNames:
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise ScaffoldError(
            f"{name!r} is not a plugin name: use lower-case letters, digits and single underscores, "
            f"starting with a letter, at most {MAX_NAME} characters (e.g. 'library_rooms')"
        )
    if keyword.iskeyword(name) or name == "core":
        raise ScaffoldError(f"{name!r} is reserved; choose another plugin name")
    if name in installed:
        raise ScaffoldError(
            f"a plugin called {name!r} is installed already (installed: {', '.join(installed)}); choose another name"
        )
    names = PluginNames(name)
    package = names.placeholders()["package"]
    if importlib.util.find_spec(package) is not None:
        raise ScaffoldError(f"a Python package {package!r} exists already; choose another plugin name")
    return names


def _target(relative: Path, values: dict[str, str]) -> Path:
    parts = [
        values["package"] if part == "package" else part.replace("__name__", values["name"]) for part in relative.parts
    ]
    return Path(*parts).with_suffix("")  # drop .tmpl


def write_plugin(name: str, folder: Path, installed: list[str]) -> list[Path]:
    """Write the plugin ``name`` into ``folder`` (new or empty); return the files written."""
    names = check_name(name, installed)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ScaffoldError(f"{folder} exists and is not an empty folder; pass --dir with a new or empty folder")
    values = names.placeholders()
    written: list[Path] = []
    for source in sorted(TEMPLATE.rglob("*.tmpl")):
        target = folder / _target(source.relative_to(TEMPLATE), values)
        target.parent.mkdir(parents=True, exist_ok=True)
        # substitute, not safe_substitute: a placeholder the templates misspell fails here, not in the plugin.
        target.write_text(string.Template(source.read_text(encoding="utf-8")).substitute(values), encoding="utf-8")
        written.append(target)
    return written
