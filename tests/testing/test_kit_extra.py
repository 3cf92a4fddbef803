"""The kit's test dependencies are the ``testing`` extra of campus-mcp, and saying so when one is missing.

A plugin author with ``campus-mcp`` and pytest but without pytest-asyncio or jsonschema used to get
a bare ``No module named 'pytest_asyncio'`` while pytest loaded the kit. The kit is imported here in
a fresh interpreter in which the package cannot be found, as in that author's virtualenv.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = 'pip install "campus-mcp[testing]"'
# Hides one top-level package from the import system, then runs the import under test.
WITHOUT = """
import sys
from importlib.abc import MetaPathFinder

class Absent(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == {missing!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
{code}
"""


def run_without(missing: str, code: str) -> subprocess.CompletedProcess[str]:
    script = WITHOUT.format(missing=missing, code=code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("missing", "code"),
    [
        ("pytest_asyncio", "import campus_mcp.testing"),
        ("jsonschema", "from campus_mcp.testing import plugin_contract; plugin_contract('dining')"),
    ],
)
def test_a_missing_kit_dependency_names_the_extra_to_install(missing: str, code: str) -> None:
    result = run_without(missing, code)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ModuleNotFoundError:"), result.stderr[-2000:]
    assert repr(missing) in last_line and INSTALL in last_line, last_line


def pins() -> dict[str, str]:
    pinned = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        if version:
            pinned[name.strip().lower()] = version.strip()
    return pinned


def test_the_testing_extra_names_what_the_kit_imports_and_dev_includes_it() -> None:
    """A range each (a plugin's own tests may need another pytest), holding the version CI runs."""
    from packaging.requirements import Requirement

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    testing = {Requirement(spec).name.lower(): Requirement(spec) for spec in extras["testing"]}
    pinned = pins()
    for distribution in ("pytest", "pytest-asyncio", "jsonschema"):
        assert distribution in testing, extras["testing"]
        assert testing[distribution].specifier.contains(pinned[distribution]), extras["testing"]
        assert all(spec.operator != "==" for spec in testing[distribution].specifier), extras["testing"]
    assert "campus-mcp[testing]" in extras["dev"]


def test_a_new_plugin_tests_with_the_kits_extra() -> None:
    template = (ROOT / "host/campus_mcp/cli/scaffold/template/pyproject.toml.tmpl").read_text()
    extras = tomllib.loads(re.sub(r"\$\{(\w+)\}", r"\1", template))["project"]["optional-dependencies"]
    assert extras["test"] == ["campus-mcp[testing]"]
