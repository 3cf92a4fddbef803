"""``campus-mcp --help`` and ``campus-mcp plugins`` load only what they need (issue 14.7).

Each command runs as an operator runs it, the installed ``campus-mcp`` in a subprocess, under
``python -X importtime``, which names every module the process imported. Neither may import a
plugin's package, the web stack (litestar, uvicorn), the database layer (sqlalchemy, alembic) or
the MCP SDK; and each still prints what it printed before (the host's commands with their help;
each installed plugin with its version and whether it is enabled). A test of what is imported,
not of time: bench/cli_startup.py measures the time.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import campus_mcp
import campus_mcp.cli.main as cli
import click
import pytest
from campus_mcp.assembly.registry import ENTRY_POINT_GROUP

CLI = Path(sys.executable).with_name("campus-mcp")
INIT = Path(campus_mcp.__file__)
# What a command that needs neither the database nor a server must not import.
HEAVY = {"sqlalchemy", "alembic", "litestar", "uvicorn", "mcp", "mcp_types", "starlette", "aiosqlite", "asyncpg"}


def plugin_packages() -> set[str]:
    return {
        entry.value.split(":")[0].split(".")[0] for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    }


def run_cli(*args: str, cwd: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The command's result and the top-level packages it imported."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    environment |= {"CAMPUS_MCP_CONFIG": str(cwd / "absent.toml"), **env}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", str(CLI), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    result.stderr = "\n".join(line for line in result.stderr.splitlines() if not line.startswith("import time:"))
    return result, imported


@pytest.mark.parametrize("args", [("--help",), ("serve", "--help"), ("plugins",)])
def test_the_command_imports_no_plugin_and_nothing_heavy(args: tuple[str, ...], tmp_path: Path) -> None:
    result, imported = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "campus_mcp" in imported  # the measurement works: the host itself is there
    assert imported & plugin_packages() == set()
    assert imported & HEAVY == set()


def test_help_lists_the_host_commands_with_their_help(tmp_path: Path) -> None:
    result, _ = run_cli("--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0]: line for line in result.stdout.split("Commands:", 1)[1].splitlines() if line.strip()}
    for name in ("serve", "stdio", "worker", "db", "demo", "plugins", "parity", "jobs", "new-plugin"):
        assert name in listed, result.stdout
    # Commands of other modules, listed before they are imported, with their own short help.
    assert "Print a short-lived access token for a student" in listed["token"]
    assert "Students: list, disable and enable any" in listed["students"]
    assert "campus-mcp COMMAND --help" in result.stdout  # where the plugins' commands are


def test_the_listed_help_of_a_command_not_imported_is_its_own() -> None:
    context = click.Context(cli.main)
    for name, (_, _, short_help) in cli.CampusCommands.elsewhere.items():
        command = cli.main.get_command(context, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str(limit=200) == short_help


def test_plugins_lists_every_installed_plugin_from_its_metadata(tmp_path: Path) -> None:
    result, _ = run_cli("plugins", cwd=tmp_path, CAMPUS_MCP_DISABLE="friends")
    assert result.returncode == 0, result.stderr
    listed = {plugin["name"]: plugin for plugin in json.loads(result.stdout)}
    installed = {entry.name: entry for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert set(listed) == {"core", *installed}
    dining = installed["dining"]
    assert dining.dist is not None
    assert listed["dining"] == {
        "name": "dining",
        "version": dining.dist.version,
        "distribution": dining.dist.name,
        "enabled": True,
    }
    # A disabled plugin is listed, saying what disabled it.
    assert listed["friends"]["enabled"] is False
    assert listed["friends"]["disabled_by"] == "CAMPUS_MCP_DISABLE"
    assert listed["core"]["enabled"] is True and listed["core"]["version"] == campus_mcp.__version__


def test_plugins_says_when_an_enabled_plugin_cannot_start(tmp_path: Path) -> None:
    # schedule, apps and prompts need catalog: serve would refuse these settings, so the list says so.
    result, _ = run_cli("plugins", cwd=tmp_path, CAMPUS_MCP_DISABLE="catalog")
    assert result.returncode == 0, result.stderr
    listed = {plugin["name"]: plugin for plugin in json.loads(result.stdout)}
    assert listed["schedule"]["enabled"] is True
    assert listed["schedule"]["cannot_start"] == (
        "plugin 'schedule' needs plugin 'catalog', which CAMPUS_MCP_DISABLE turns off: "
        "enable 'catalog' or disable 'schedule' too"
    )
    assert {name for name, plugin in listed.items() if "cannot_start" in plugin} == {"schedule", "apps", "prompts"}
    assert "These settings cannot start: plugin 'schedule' needs plugin 'catalog'" in result.stderr
    # friends needs schedule, which is still on: its own line does not blame it.
    assert "cannot_start" not in listed["friends"] and "cannot_start" not in listed["dining"]


def test_plugins_with_an_allow_list_that_matches_nothing_says_so(tmp_path: Path) -> None:
    result, _ = run_cli("plugins", cwd=tmp_path, CAMPUS_MCP_PLUGINS="catalgo")
    assert result.returncode == 1
    assert "names no installed plugin: 'catalgo'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_plugin_command_still_runs(tmp_path: Path) -> None:
    # The catalog's `import` group loads with the plugins, for the command that asks for it.
    result, imported = run_cli("import", "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "banner" in result.stdout
    assert "campus_catalog" in imported
    # Every plugin loaded, and still not the MCP SDK (~2 s of CPU): a command that serves no MCP
    # (db upgrade, jobs list, token; subprocesses of many tests) never needs it. The friends
    # dashboard's links to the endpoint's paths come from campus_mcp.base.mcp_paths, not the endpoint.
    assert {"campus_friends", "campus_schedule"} <= imported
    assert imported & {"mcp", "mcp_types"} == set()


def test_every_public_name_of_campus_mcp_is_in_the_lazy_table() -> None:
    # The package's imports for a type checker and its table for run time name the same things.
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    [checking] = [node for node in tree.body if isinstance(node, ast.If)]
    typed = {
        (node.module, alias.name, alias.asname or alias.name)
        for node in checking.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    table = {
        (module, campus_mcp._RENAMED.get(name, name), name)
        for module, names in campus_mcp._EXPORTS.items()
        for name in names
    }
    assert typed == table
    assert {name for _, _, name in table} == set(campus_mcp.__all__)
    for name in campus_mcp.__all__:
        assert getattr(campus_mcp, name) is not None
