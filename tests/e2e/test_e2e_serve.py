"""What a new user does: ``campus-mcp serve``, then an MCP client lists the tools, in both eras.

The server runs as a real subprocess (migrations, demo load, uvicorn) on a free loopback port,
with a database of its own (SQLite, or PostgreSQL when the suite runs against it) and the opt-in
anonymous access on, so the client needs no sign-in.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.settings import Settings
from campus_mcp.testing import TestDatabases, serve
from campus_mcp.testing.oauth import free_port
from mcp import Client


async def test_serve_then_list_tools_in_both_eras(campus_databases: TestDatabases, tmp_path: Path) -> None:
    database_url = await campus_databases.empty()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        # Sign-in is the default (tests/e2e/test_e2e_student_tools.py drives it); this test is about
        # the opt-in anonymous toolset a plain client sees.
        "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
        # The jobs would fetch from the campus's servers; this test stays on loopback.
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        # Demo mode makes its secret key in the var folder: the test's, not the checkout's.
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    port = free_port()
    # The public toolset this server should show an anonymous client: every tool under an always-on scope.
    registry = load_registry(Settings(database_url=database_url, port=port))
    public = {name for name, scope in registry.scopes.items() if scope.always_on}
    expected = sorted(tool.name for tool in registry.tools.values() if tool.scope in public)
    assert expected, "no public tools installed: this test would prove nothing"

    with serve(env, port=port, log_path=tmp_path / "serve.log") as served:
        url = served.mcp_url
        seen: dict[str, list[str]] = {}
        # "auto" probes server/discover first and must settle on the new era too.
        for mode, version in (("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"), ("auto", "2026-07-28")):
            async with Client(url, mode=mode) as client:
                assert client.protocol_version == version
                if mode != "2026-07-28":  # a pinned 2026 client skips the handshake that names the server
                    assert client.server_info is not None and client.server_info.name == "campus-mcp"
                listed = await client.list_tools()
                seen[mode] = sorted(tool.name for tool in listed.tools)
                for tool in listed.tools:
                    assert tool.input_schema.get("type") == "object"
                    assert tool.output_schema is not None
                    assert tool.annotations is not None
        assert seen == {"legacy": expected, "2026-07-28": expected, "auto": expected}
        # Issue 16: no log line per request by default (CAMPUS_MCP_ACCESS_LOG turns uvicorn's on).
        log = served.log.read_text(errors="replace")
        assert "Serving " in log, log
        assert "POST /api/mcp" not in log and "GET /healthz" not in log, log
    await campus_databases.drop(database_url)
