"""``campus-mcp serve`` against slow clients and foreign names (issue 35, point 15).

A real ``campus-mcp serve`` subprocess on loopback, with a header deadline of one second: a
connection that sends half a request's headers is answered 408 and closed, one that sends nothing
is closed, and neither stops the server answering; an idle kept-alive connection is closed after
``CAMPUS_MCP_HTTP_KEEP_ALIVE_SECONDS``. ``/metrics`` refuses, from this very machine, a request
that names another ``Host`` (a DNS-rebinding page), by the rule ``/api/mcp`` has
(campus_mcp.dns_rebinding), and still answers the names the server is reached by, and a scraper
with the metrics token.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import httpx
from campus_mcp.testing import ServedCampus, TestDatabases, serve

# A test that waits longer than this for the server has found no deadline at all.
FAILSAFE_SECONDS = 30.0
TOKEN = "a-scraper-token-for-tests-only"


def _port(served: ServedCampus) -> int:
    return int(served.base.rsplit(":", 1)[1])


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails the test)."""
    sock.settimeout(FAILSAFE_SECONDS)
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def _half_sent_request(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow")
        return _read_until_closed(sock)


def _silent_connection(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        return _read_until_closed(sock)


def _idle_after_one_answer(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return _read_until_closed(sock)


async def test_slow_clients_are_closed_and_metrics_refuses_a_foreign_host(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    env = {
        "CAMPUS_MCP_DATABASE_URL": await campus_databases.empty(),
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_PLUGINS": "catalog",
        "CAMPUS_MCP_HTTP_HEADER_TIMEOUT_SECONDS": "1",
        "CAMPUS_MCP_HTTP_KEEP_ALIVE_SECONDS": "1",
        "CAMPUS_MCP_METRICS_TOKEN": TOKEN,
    }
    with serve(env, log_path=tmp_path / "serve.log") as served:
        port = _port(served)
        # Many at once, as a slowloris client holds them: each is answered 408 and closed.
        answers = await asyncio.gather(*(asyncio.to_thread(_half_sent_request, port) for _ in range(20)))
        for answer in answers:
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert b"did not arrive in time" in answer
        assert await asyncio.to_thread(_silent_connection, port) == b""  # closed without a word
        kept = await asyncio.to_thread(_idle_after_one_answer, port)
        assert kept.startswith(b"HTTP/1.1 200 ") and kept.count(b"HTTP/1.1") == 1, kept

        async with httpx.AsyncClient(base_url=served.base, timeout=FAILSAFE_SECONDS) as http:
            assert (await http.get("/healthz")).status_code == 200  # the server is still there
            # /metrics from this machine: its own names answer, another is refused.
            for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
                assert (await http.get("/metrics", headers={"Host": host})).status_code == 200, host
            for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1.attacker.example"):
                refused = await http.get("/metrics", headers={"Host": host})
                assert refused.status_code == 421, (host, refused.text)
                assert "CAMPUS_MCP_ALLOWED_HOSTS" in refused.text and "attacker" not in refused.text
                assert "campus_mcp_" not in refused.text
            # A scraper with the token reaches it under any name (a pod's address, say).
            scraped = await http.get("/metrics", headers={"Host": "10.1.2.3:8000", "Authorization": f"Bearer {TOKEN}"})
            assert scraped.status_code == 200 and "campus_mcp_" in scraped.text
