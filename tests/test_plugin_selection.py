"""Choosing plugins with CAMPUS_MCP_PLUGINS and CAMPUS_MCP_DISABLE: a misspelt name is never ignored in silence.

An allow list that matches no plugin would start a server with no campus tools at all, so it
stops start-up; a name that matches nothing next to names that do is named in one warning, with
the plugins that are installed, so the operator sees the typo.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from campus_mcp import testing
from campus_mcp.registry import PluginError, load_registry

from tests.test_cli import run_cli

INSTALLED = "apps, canvas, catalog, dining, friends, prompts, schedule, settings"


def sqlite(tmp_path: Path) -> dict[str, str]:
    return {"CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"}


def test_an_allow_list_that_matches_no_plugin_stops_start_up(tmp_path: Path) -> None:
    result = run_cli("plugins", cwd=tmp_path, CAMPUS_MCP_PLUGINS="catalgo", **sqlite(tmp_path))
    assert result.returncode == 1
    assert "CAMPUS_MCP_PLUGINS" in result.stderr
    assert "'catalgo'" in result.stderr
    assert INSTALLED in result.stderr  # what the operator can choose from
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_misspelt_name_next_to_a_right_one_is_named_in_one_warning(tmp_path: Path) -> None:
    result = run_cli("plugins", cwd=tmp_path, CAMPUS_MCP_PLUGINS="catalog,catalgo", **sqlite(tmp_path))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "catalgo" in line]
    assert len(warnings) == 1, result.stderr  # once, although the command line loads the plugins twice
    assert "CAMPUS_MCP_PLUGINS" in warnings[0] and INSTALLED in warnings[0]
    assert "catalog" in result.stdout


def test_a_misspelt_name_in_the_block_list_is_named(tmp_path: Path) -> None:
    result: subprocess.CompletedProcess[str] = run_cli(
        "plugins", cwd=tmp_path, CAMPUS_MCP_DISABLE="frineds", **sqlite(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    [warning] = [line for line in result.stderr.splitlines() if "frineds" in line]
    assert "CAMPUS_MCP_DISABLE" in warning and INSTALLED in warning
    # The typo disabled nothing: friends still serves its tools, and the warning is how one learns it.
    assert '"friends"' in result.stdout


def test_the_registry_raises_and_warns_in_process(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"
    with pytest.raises(PluginError, match=r"'catalgo'.*CAMPUS_MCP_PLUGINS"):
        load_registry(testing.test_settings(url, plugins=["catalgo"]))
    with caplog.at_level(logging.WARNING, logger="campus_mcp.registry"):
        registry = load_registry(testing.test_settings(url, plugins=["dining", "dinning"]))
    assert sorted(registry.plugins) == ["core", "dining"]
    assert [r.getMessage() for r in caplog.records if "'dinning'" in r.getMessage()], caplog.text


def test_an_empty_allow_list_still_means_the_host_alone(tmp_path: Path) -> None:
    # Tests and host-only deployments use it on purpose; it names no plugin, so nothing is misspelt.
    registry = load_registry(testing.test_settings(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", plugins=[]))
    assert sorted(registry.plugins) == ["core"]
