"""``campus-mcp new-plugin`` writes a plugin that works as it is (issue 10, point 4).

Into a temporary folder: the command writes the plugin, pip installs it into this virtualenv
(uninstalled at the end), and then its own tests pass in a subprocess of their own (the kit's
contract line included, outside this repository's pytest settings), ``campus-mcp serve`` lists and
answers its tool over ``/api/mcp`` with the real SDK client, ``campus-mcp parity`` passes, and
``CAMPUS_MCP_DISABLE=<name>`` removes it. Run it alone with ``pytest -m new_plugin``.

The install is a regular one, not ``-e``: an editable install reaches ``sys.path`` through a
``.pth`` file that only a new interpreter reads, and other processes started before the install
(this one included) could then see the entry point but not import the package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from campus_mcp.testing import TestDatabases, serve
from mcp import Client

pytestmark = pytest.mark.new_plugin

NAME = "study_rooms"
DISTRIBUTION = "campus-mcp-study-rooms"
TOOL = "list_study_rooms"
ROUTE = "GET /api/v1/study-rooms/items"
CLI = Path(sys.executable).with_name("campus-mcp")


def clean_env(**extra: str) -> dict[str, str]:
    """This shell's environment without its campus settings; the test database URL is the kit's choice."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_") or k == "CAMPUS_MCP_TEST_DATABASE_URL"
    }
    env.update(extra)
    return env


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=900, check=False
    )


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pip", *args], cwd=Path.cwd())


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The new plugin's folder, written by the command and installed into this virtualenv."""
    folder = tmp_path_factory.mktemp("new-plugin") / DISTRIBUTION
    written = run([str(CLI), "new-plugin", NAME, "--dir", str(folder)], cwd=folder.parent)
    assert written.returncode == 0, written.stderr
    assert "Next:" in written.stdout and "pip install" in written.stdout
    # --no-deps: campus-mcp is installed already. The build backend comes the way it does for an author.
    installed = pip("install", "--no-deps", str(folder))
    try:
        assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
        yield folder
    finally:
        pip("uninstall", "-y", DISTRIBUTION)


def test_it_writes_the_smallest_right_shape(plugin: Path) -> None:
    package = plugin / f"campus_{NAME}"
    for part in (
        "pyproject.toml",
        "README.md",
        "tests/test_study_rooms.py",
        "campus_study_rooms/plugin.py",
        "campus_study_rooms/models.py",
        "campus_study_rooms/migrations/versions/study_rooms_0001.py",
        "campus_study_rooms/queries.py",
        "campus_study_rooms/operations.py",
        "campus_study_rooms/demo.py",
        "campus_study_rooms/examples.py",
    ):
        assert (plugin / part).is_file(), part
    # One declaration makes the tool and its REST twin: no hand-written Tool or Controller beside it.
    assert not (package / "tools.py").exists() and not (package / "routes.py").exists()
    sources = "\n".join(source.read_text() for source in package.rglob("*.py"))
    assert sources.count("Operation(") == 1
    assert "Tool(" not in sources and "Controller" not in sources
    # It needs no settings, so it declares none.
    assert "PluginSettings" not in sources and "settings_model" not in sources
    assert (
        'TestStudyRoomsContract = plugin_contract("study_rooms")' in (plugin / "tests/test_study_rooms.py").read_text()
    )
    # Only the public modules: campus_mcp and campus_mcp.testing.
    for source in [*package.rglob("*.py"), *(plugin / "tests").rglob("*.py")]:
        for line in source.read_text().splitlines():
            if line.startswith(("from campus_mcp", "import campus_mcp")):
                assert line.split()[1] in ("campus_mcp", "campus_mcp.testing"), f"{source.name}: {line}"


def test_its_own_tests_pass_with_the_contract(plugin: Path) -> None:
    result = run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"], cwd=plugin)
    output = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, output
    assert "TestStudyRoomsContract::test_demo_example_matches_the_output_schema" in result.stdout, output
    assert "TestStudyRoomsContract::test_sparse_example_matches_the_output_schema" in result.stdout, output


async def test_serve_lists_and_answers_its_tool(plugin: Path, campus_databases: TestDatabases, tmp_path: Path) -> None:
    database_url = await campus_databases.empty()
    env = clean_env(
        CAMPUS_MCP_DATABASE_URL=database_url,
        CAMPUS_MCP_SCHEDULER="false",
        CAMPUS_MCP_CONFIG=str(tmp_path / "absent.toml"),
        CAMPUS_MCP_VAR_DIR=str(tmp_path / "var"),  # demo mode's generated key: the test's folder, not the checkout's
        CAMPUS_MCP_PLUGINS=NAME,  # the new plugin alone: a quick start, and nothing else answers
        # Sign-in is the default; the template's scope is always on, so the opt-in anonymous
        # toolset is the plain client's way in.
        CAMPUS_MCP_ANONYMOUS_ACCESS="true",
    )
    try:
        with serve(env, log_path=tmp_path / "serve.log") as served:
            async with Client(served.mcp_url, mode="legacy") as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                assert TOOL in listed
                result = await client.call_tool(TOOL, {"q": "quiet"})
        assert not result.is_error, result.content
        assert result.structured_content is not None
        assert [item["name"] for item in result.structured_content["items"]] == ["Quiet corner"]
    finally:
        await campus_databases.drop(database_url)


def test_parity_passes_with_its_route(plugin: Path, tmp_path: Path) -> None:
    result = run([str(CLI), "parity", "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["routes"][ROUTE] == NAME
    assert report["covered"][ROUTE] == [TOOL]


def test_disabling_it_removes_it(plugin: Path, tmp_path: Path) -> None:
    def plugin_names(**env: str) -> list[str]:
        result = run([str(CLI), "plugins", "--contributions"], cwd=tmp_path, env=clean_env(**env))
        assert result.returncode == 0, result.stderr
        return [entry["name"] for entry in json.loads(result.stdout)]

    assert NAME in plugin_names()
    assert NAME not in plugin_names(CAMPUS_MCP_DISABLE=NAME)
    parity = run([str(CLI), "parity", "--json"], cwd=tmp_path, env=clean_env(CAMPUS_MCP_DISABLE=NAME))
    assert parity.returncode == 0 and ROUTE not in json.loads(parity.stdout)["routes"]


@pytest.mark.parametrize(
    ("name", "complaint"),
    [
        ("Study-Rooms", "is not a plugin name"),
        ("class", "is reserved"),
        ("dining", "is installed already"),
        ("mcp", "a Python package 'campus_mcp' exists already"),
    ],
)
def test_a_bad_name_is_refused_and_nothing_is_written(name: str, complaint: str, tmp_path: Path) -> None:
    result = run([str(CLI), "new-plugin", name, "--dir", str(tmp_path / "out")], cwd=tmp_path)
    assert result.returncode != 0
    assert complaint in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_folder_with_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = run([str(CLI), "new-plugin", "quiet_rooms", "--dir", str(tmp_path)], cwd=tmp_path)
    assert result.returncode != 0
    assert "not an empty folder" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
