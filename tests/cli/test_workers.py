"""Several workers (issue 15.3): what ``serve --workers N`` and ``worker`` refuse to start on, before
anything is written, with one line that says which setting to set (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.scale_out import run_command

# Never reached: the refusals come before any connection.
POSTGRES = "postgresql+asyncpg://campus@127.0.0.1:9/never"


@pytest.mark.parametrize(
    ("args", "settings", "said"),
    [
        (["serve", "--workers", "2"], {}, "--workers needs PostgreSQL"),
        (["serve", "--workers", "2"], {"CAMPUS_MCP_DATABASE_URL": POSTGRES}, "--workers needs CAMPUS_MCP_SECRET_KEY"),
        (["worker"], {}, "campus-mcp worker needs CAMPUS_MCP_SECRET_KEY"),
    ],
)
def test_several_processes_refuse_sqlite_or_a_generated_key(
    args: list[str], settings: dict[str, str], said: str, tmp_path: Path
) -> None:
    env = {
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        **settings,
    }
    done = run_command(*args, env=env, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert said in done.stderr
    assert "Set " in done.stderr  # what to do
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "campus.db").exists()  # nothing migrated by a server that did not start
