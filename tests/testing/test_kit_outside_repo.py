"""The test kit as a plugin author uses it: in a folder of their own, outside this repository's pytest settings.

This repository's ``pyproject.toml`` sets ``asyncio_mode = "auto"`` and session-wide loop scopes;
an author's project does not. Each test writes a small plugin test folder with its own
``pytest.ini`` into ``tmp_path`` and runs pytest on it in a subprocess, warnings about async
fixtures turned into errors, the way pytest 9 treats a fixture pytest-asyncio does not run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The dining example as its author would test it, with the kit's fixtures and nothing else.
DINING_TESTS = """
from __future__ import annotations

import pytest
from campus_mcp.testing import CampusFactory, CampusHarness

{marker}


async def test_the_dining_halls_through_the_mcp_client(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["dining"], demo=True)
    result = await campus.call("list_dining_halls", {{"open_on": "sunday"}})
    assert not result.is_error
    assert [hall["name"] for hall in result.structured_content["halls"]] == ["Commons Dining Hall"]


async def test_the_shared_demo_campus_has_the_dining_halls(demo_campus: CampusHarness) -> None:
    result = await demo_campus.call("list_dining_halls", {{}})
    assert result.structured_content["count"] == 3


async def test_a_second_campus_in_the_same_session(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["dining"], demo=True)
    async with campus.rest() as rest:
        assert (await rest.get("/api/v1/dining/halls")).json()["count"] == 3
"""


def run_plugin_tests(folder: Path, ini: str, marker: str) -> subprocess.CompletedProcess[str]:
    tests = folder / "tests"
    tests.mkdir(parents=True)
    (folder / "pytest.ini").write_text(textwrap.dedent(ini))
    (tests / "test_dining_plugin.py").write_text(DINING_TESTS.format(marker=marker))
    # The database the tests use is the kit's choice (SQLite unless CAMPUS_MCP_TEST_DATABASE_URL):
    # keep that one variable, drop any other campus setting of this shell.
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_") or k == "CAMPUS_MCP_TEST_DATABASE_URL"
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-W",
            "error::pytest.PytestRemovedIn9Warning",
            "tests",
        ],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize(
    ("ini", "marker"),
    [
        # pytest-asyncio's default, strict mode: the author marks the tests, nothing else.
        pytest.param("[pytest]\n", "pytestmark = pytest.mark.asyncio", id="strict-mode-test-loops"),
        # Auto mode, but none of this repository's loop scopes.
        pytest.param("[pytest]\nasyncio_mode = auto\n", "", id="auto-mode"),
    ],
)
def test_the_kit_works_in_a_plugin_folder_of_its_own(tmp_path: Path, ini: str, marker: str) -> None:
    result = run_plugin_tests(tmp_path / "campus-dining", ini, marker)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "3 passed" in result.stdout
    assert "requested an async fixture" not in result.stdout + result.stderr
