"""A database outage answers an MCP client in the protocol (issue 27, point 7).

A signed-in client's request needs the database before any tool runs (its token is checked
there). With the database cut off, that answer was an HTTP 503 with a plain JSON body, which the
MCP SDK shows as "Server returned an error response"; now it is a JSON-RPC error carrying the
sentence (still at 503, with Retry-After), which the SDK raises as an MCPError the client reads.
PostgreSQL through the stalling proxy of tests/web/test_faults.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import httpx2
import pytest
from campus_mcp.testing import TestDatabases, serve
from campus_mcp.testing.oauth import free_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from sqlalchemy.engine import make_url

from tests.support.scale_out import SHARED_KEY, run_command
from tests.web.test_faults import StallingProxy


async def test_a_signed_in_call_during_an_outage_gets_a_json_rpc_error_with_the_sentence(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    if not campus_databases.postgres:
        pytest.skip("PostgreSQL part: set CAMPUS_MCP_TEST_DATABASE_URL")
    database_url = await campus_databases.empty()
    real = make_url(database_url)
    port = free_port()
    with StallingProxy(real.host or "127.0.0.1", real.port or 5432).running() as proxy:
        through = real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        env = {
            "CAMPUS_MCP_DATABASE_URL": through,
            "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
            "CAMPUS_MCP_PLUGINS": "catalog,schedule",
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_DATABASE_TIMEOUT_SECONDS": "2",
            "CAMPUS_MCP_PORT": str(port),
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        }
        with serve(env, port=port, log_path=tmp_path / "serve.log") as served:
            made = await asyncio.to_thread(run_command, "token", "--student", "student1", env=env)
            assert made.returncode == 0, made.stderr
            headers = {"Authorization": f"Bearer {made.stdout.strip()}"}
            async with (
                httpx2.AsyncClient(timeout=60, headers=headers) as http,
                Client(streamable_http_client(served.mcp_url, http_client=http)) as client,  # type: ignore[arg-type]
            ):
                assert not (await client.call_tool("my_courses", {})).is_error
                proxy.stall()
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("my_courses", {})
            said = str(raised.value)
            assert "The campus database cannot be reached right now" in said, said
            assert "Server returned an error response" not in said
            async with httpx.AsyncClient(timeout=30) as plain:
                raw = await plain.post(
                    served.mcp_url,
                    json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                    headers={**headers, "Accept": "application/json, text/event-stream"},
                )
            assert raw.status_code == 503 and raw.headers["retry-after"] == "30"
            assert raw.json()["error"]["message"].startswith("The campus database cannot be reached")
            proxy.resume()
    await campus_databases.drop(database_url)
