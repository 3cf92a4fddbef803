"""What a new user does: ``campus-mcp serve``, then an MCP client lists the tools, in both eras.

The server runs as a real subprocess (migrations, demo load, uvicorn) on a free loopback port,
with a database of its own (SQLite, or PostgreSQL when the suite runs against it) and the opt-in
anonymous access on, so the client needs no sign-in.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from campus_mcp.registry import load_registry
from campus_mcp.settings import Settings
from campus_mcp.testing import TestDatabases
from mcp import Client

START_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def campus_serve(env: dict[str, str], port: int, log_path: Path) -> Iterator[str]:
    """Run ``campus-mcp serve`` until the block ends; yields the MCP URL once /healthz answers."""
    command = [str(Path(sys.executable).parent / "campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if process.poll() is not None:
                    pytest.fail(f"campus-mcp serve exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
                with contextlib.suppress(httpx.TransportError):
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"campus-mcp serve did not answer in {START_TIMEOUT_S}s:\n{log_path.read_text()[-3000:]}"
                    )
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}/api/mcp"
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def test_serve_then_list_tools_in_both_eras(campus_databases: TestDatabases, tmp_path: Path) -> None:
    database_url = await campus_databases.empty()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CAMPUS_MCP_")  # the developer's own settings must not leak in
    }
    env.update(
        {
            "CAMPUS_MCP_DATABASE_URL": database_url,
            # Sign-in is the default (tests/test_e2e_student_tools.py drives it); this test is about
            # the opt-in anonymous toolset a plain client sees.
            "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
            # The jobs would fetch from the campus's servers; this test stays on loopback.
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            # Demo mode makes its secret key in the var folder: the test's, not the checkout's.
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        }
    )
    port = free_port()
    # The public toolset this server should show an anonymous client: every tool under an always-on scope.
    registry = load_registry(Settings(database_url=database_url, port=port))
    public = {name for name, scope in registry.scopes.items() if scope.always_on}
    expected = sorted(tool.name for tool in registry.tools.values() if tool.scope in public)
    assert expected, "no public tools installed: this test would prove nothing"

    with campus_serve(env, port, tmp_path / "serve.log") as url:
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
    await campus_databases.drop(database_url)
