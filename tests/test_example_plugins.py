"""An example plugin (the dining one, which ``make bootstrap`` installs) is not enabled by an unset
allow list outside demo mode, so a production consent page never asks for "See dining hall hours"
(issue 27). Demo mode, or the allow list naming it, still enables it.
"""

from __future__ import annotations

import json
from pathlib import Path

from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.settings import Settings

from tests.support.scale_out import SHARED_KEY, run_command


def listed(tmp_path: Path, **env: str) -> dict[str, dict[str, object]]:
    base = {"CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"), "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var")}
    answer = run_command("plugins", env=base | env)
    assert answer.returncode == 0, answer.stderr
    return {plugin["name"]: plugin for plugin in json.loads(answer.stdout)}


def test_an_unset_allow_list_leaves_the_example_out_of_production_only(tmp_path: Path) -> None:
    production = listed(tmp_path, CAMPUS_MCP_DEMO="false", CAMPUS_MCP_SECRET_KEY=SHARED_KEY)
    assert production["dining"]["enabled"] is False
    assert "CAMPUS_MCP_PLUGINS" in str(production["dining"]["disabled_by"])
    assert production["catalog"]["enabled"] is True  # a campus family is no example
    assert listed(tmp_path)["dining"]["enabled"] is True  # demo mode
    named = listed(tmp_path, CAMPUS_MCP_DEMO="false", CAMPUS_MCP_PLUGINS="catalog,dining")
    assert named["dining"]["enabled"] is True

    registry = load_registry(Settings(demo=False, secret_key=SHARED_KEY, plugins=None))
    assert "dining" not in registry.plugins and "catalog" in registry.plugins
    assert not any(scope.startswith("dining") for scope in registry.scopes)
    assert "dining" in load_registry(Settings(demo=True, plugins=None)).plugins
