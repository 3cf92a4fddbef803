"""Text a client chose never forges a line of the server's log or a row of a command's table
(issue 35, point 11).

A real ``campus-mcp serve`` writing the text log format is asked, over MCP, for tools whose names
hold a newline, a carriage return, an ANSI escape, a NUL, U+2028 and U+202E: every one of them is
written escaped on the one ``tools/call`` line, and no line of the log starts with the text the
client planted. An app whose ``client_name`` holds one of them is refused at registration (RFC 7591
``invalid_client_metadata``, with a description naming the character), through the served app.
An app registered under such a name by an earlier release is one line per entry in
``campus-mcp audit``, run as an operator runs it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import httpx
import httpx2
import pytest
from campus_mcp.base.db import utcnow
from campus_mcp.oauth.store import ClientRecord, OAuthStore
from campus_mcp.students.access_log import StudentAccess
from campus_mcp.testing import CampusFactory, TestDatabases, serve
from campus_mcp.testing.oauth import TEST_REDIRECT_URI, BrowserStudent, MemoryStorage, free_port, provider_for
from campus_mcp.testing.oauth import serve_on_loopback as serve_app
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# What an attacker would like a log reader to believe the server wrote.
FORGED = "2026-01-01T00:00:00.000Z INFO campus_mcp.cli.main the admin password was reset"
# Each character a client may try, in the place where it does harm.
HOSTILE = {
    "newline": "calendar\n" + FORGED,
    "carriage return": "calendar\r" + FORGED,
    "ANSI escape": "calendar\x1b[2J\x1b[1;31mcleared",
    "NUL": "calendar\x00hidden",
    "line separator": "calendar\u2028" + FORGED,
    "right-to-left override": "calendar\u202eexe.txt",
}
RAW = ("\r", "\x1b", "\x00", "\u2028", "\u202e")


async def test_a_tool_name_a_client_chose_stays_on_its_one_log_line(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.empty()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_LOG_FORMAT": "text",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    with serve(env, log_path=tmp_path / "serve.log") as served:
        async with (
            httpx2.AsyncClient(
                auth=provider_for(served.mcp_url, BrowserStudent("student1", "demo"), MemoryStorage()), timeout=60
            ) as http,
            Client(streamable_http_client(served.mcp_url, http_client=http)) as client,  # type: ignore[arg-type]
        ):
            for name in HOSTILE.values():
                with pytest.raises(MCPError, match="Unknown tool"):
                    await client.call_tool(name, {})
            # The server is still there and answers a real tool.
            assert not (await client.call_tool("list_terms", {})).is_error
        log = served.log.read_bytes().decode("utf-8")

    lines = log.split("\n")
    assert not [line for line in lines if line.startswith(FORGED[:24])], log[-3000:]
    for character in RAW:
        assert character not in log, f"{character!r} reached the log raw"
    calls = [line for line in lines if " campus_mcp.tool_calls " in line and "tools/call calendar" in line]
    assert len(calls) == len(HOSTILE), calls
    written = "\n".join(calls)
    # Each one as an escape a reader can see, in the message and in the tool= field.
    for escape in ("calendar\\n2026-01-01", "calendar\\r2026", "\\x1b[2J", "calendar\\x00hidden", "\\u2028", "\\u202e"):
        assert written.count(escape) == 2, (escape, written)


async def test_an_app_name_with_a_hidden_character_is_refused_at_registration(campus_factory: CampusFactory) -> None:
    port = free_port()
    campus = await campus_factory(plugins=[], demo=True, public_url=f"http://127.0.0.1:{port}")
    async with serve_app(campus.app, port) as base, httpx.AsyncClient(timeout=30) as http:
        for what, name in HOSTILE.items():
            refused = await http.post(
                f"{base}/api/oauth/register", json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": name}
            )
            assert refused.status_code == 400, (what, refused.text)
            answer = refused.json()
            assert answer["error"] == "invalid_client_metadata", answer
            assert "client_name holds U+" in answer["error_description"], answer
            assert "as one line of visible characters" in answer["error_description"], answer
        described = await http.post(
            f"{base}/api/oauth/register",
            json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Ada\u202e" + "gnp.exe"},
        )
        assert "U+202E (RIGHT-TO-LEFT OVERRIDE)" in described.json()["error_description"]
        # No field has a use for one; PostgreSQL could not even store a NUL (it answered 500).
        nul_uri = await http.post(
            f"{base}/api/oauth/register",
            json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Ada", "client_uri": "https://a.example/\x00"},
        )
        assert nul_uri.status_code == 400, nul_uri.text
        assert "client_uri holds U+0000 (NULL)" in nul_uri.json()["error_description"]
        # A name in any script, with accents and spaces, is a name.
        welcome = await http.post(
            f"{base}/api/oauth/register",
            json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Café Study Helper 数学"},
        )
        assert welcome.status_code == 201, welcome.text
        assert welcome.json()["client_name"] == "Café Study Helper 数学"


async def test_an_app_name_from_before_the_rule_is_one_row_of_the_audit(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    campus = await campus_factory(demo=True)
    # An app an earlier release let register with this name, and the reads it made then.
    store = OAuthStore(campus.sessions)
    # PostgreSQL cannot store NUL in text (a registration that tried answered 500 before the rule),
    # so only SQLite can hold a name with one from before.
    # The access log's app_name is VARCHAR(300), which PostgreSQL holds it to (SQLite does not): there
    # the carriage return's forged line is left out too, the newline's forges the same.
    on_sqlite = campus.settings.database_url.startswith("sqlite")
    kept = [name for what, name in HOSTILE.items() if on_sqlite or what not in ("NUL", "carriage return")]
    hostile = "".join(kept)
    await store.save_client(
        ClientRecord(
            client_id="cmcp_old_app", kind="registered", client_name=hostile, redirect_uris=(TEST_REDIRECT_URI,)
        )
    )
    now = utcnow()
    async with campus.sessions() as session, session.begin():
        for minutes, action in ((2, "my_courses"), (1, "my_finals")):
            session.add(
                StudentAccess(
                    at=now - timedelta(minutes=minutes),
                    student_id=1,
                    app_kind="oauth",
                    app_id="cmcp_old_app",
                    app_name=hostile,
                    door="/api/mcp",
                    action=action,
                    outcome="ok",
                )
            )

    env = {key: value for key, value in os.environ.items() if not key.startswith("CAMPUS_MCP_")}
    env |= {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    command = [str(Path(sys.executable).parent / "campus-mcp"), "audit", "--student", "student1"]
    audit = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, timeout=120, check=False)
    assert audit.returncode == 0, audit.stderr
    text = audit.stdout.decode("utf-8")
    rows = text.strip("\n").split("\n")
    assert len(rows) == 2, text  # one line an entry, whatever the app called itself
    for row in rows:
        assert len(row.split("\t")) == 6, row
        assert "calendar\\n2026-01-01" in row and "\\x1b[2J" in row and "\\u202e" in row
    for character in RAW:
        assert character not in text, f"{character!r} reached the terminal raw"
