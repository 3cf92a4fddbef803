"""A note of ``campus-mcp check`` is news, not a fault: ``serve`` writes it once, as INFO (issue 35,
point 9). "/metrics answers only this machine" was a WARNING at every start of a configuration
that is right as it is (a scraper on the same machine), which taught operators to skim warnings.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp.testing import TestDatabases, serve

NOTE = "/metrics answers only this machine"


async def test_the_metrics_note_is_one_info_line_at_start(campus_databases: TestDatabases, tmp_path: Path) -> None:
    env = {
        # A production configuration, ready but for a scraper elsewhere (no metrics token).
        "CAMPUS_MCP_DEMO": "false",
        "CAMPUS_MCP_SECRET_KEY": "start-notes-tests-only-" + "k" * 32,
        "CAMPUS_MCP_PUBLIC_URL": "https://campus.example.edu",
        "CAMPUS_MCP_TRUSTED_PROXIES": "127.0.0.1",
        "CAMPUS_MCP_PLUGINS": "catalog",
        "CAMPUS_MCP_DATABASE_URL": await campus_databases.empty(),
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    with serve(env, log_path=tmp_path / "serve.log") as served:
        log = served.log.read_text(errors="replace")
    noted = [line for line in log.splitlines() if NOTE in line]
    assert len(noted) == 1, log[-3000:]
    assert " INFO campus_mcp.check " in noted[0], noted
    assert "WARNING" not in noted[0]
