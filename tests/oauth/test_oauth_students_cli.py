"""``campus-mcp students add`` creates a local account that can sign in; ``list`` never prints secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.settings import Settings
from campus_mcp.cli.main import main
from click.testing import CliRunner


def test_students_add_and_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"
    monkeypatch.setenv("CAMPUS_MCP_DATABASE_URL", url)
    upgrade(load_registry(Settings(plugins=[])))
    runner = CliRunner()
    added = runner.invoke(main, ["students", "add", "Grace", "--name", "Grace Hopper", "--password", "cobol-1959"])
    assert added.exit_code == 0, added.output
    again = runner.invoke(main, ["students", "add", "grace", "--password", "x"])
    assert again.exit_code != 0 and "exists already" in again.output
    listed = runner.invoke(main, ["students", "list"])
    assert (
        "grace\t-\tlocal\tGrace Hopper" in listed.output
    )  # the campus id column (issue 26.4): none for a local account
    assert "cobol" not in listed.output and "argon2" not in listed.output
