"""Every read of a student's data that reached its app is in the access log, even when the server is
killed with SIGKILL right after answering (issue 35, point 16; campus_mcp.access_journal).

A real ``campus-mcp serve`` of the demo campus: two worker processes on PostgreSQL, one process on
SQLite (which allows no more). An app with student1's token (``campus-mcp token``) reads the
student's calendar settings on four keep-alive connections, two over MCP (``/api/mcp``) and two on
the REST twin (with a personal access token), back to back; the moment enough answers have come back, every process of the server
is killed at once (SIGKILL to its process group), calls still in flight. Then:

1. a new ``serve`` on the same machine (the same ``CAMPUS_MCP_VAR_DIR``) writes what the killed
   processes had journaled: the database has one entry for every answer the app got (and at most
   one more per connection: a call whose entry was written but whose answer the kill cut off);
2. more calls, the new server killed the same way, and with no server running ``campus-mcp audit``
   (what the privacy office runs) lists every answered call of both rounds; no journal file and no
   journal row is left.

Before the journal, the last second of calls was lost with the processes (the batched writer's
queue was in memory: 9 of 73 entries in the deployment trial).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from campus_mcp.accounts import student_by_username
from campus_mcp.db import make_engine, make_sessions
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.oauth.testkit import free_port
from campus_mcp.testing import TestDatabases
from campus_mcp.testing import test_settings as settings_of  # not collected as a test
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.support.scale_out import SHARED_KEY, environment, run_command, tail, wait_for

TOOL = "my_calendar_settings"
CONNECTIONS = 4
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": {}}}
).encode()


@dataclasses.dataclass
class Reads:
    """What the app saw: the answers that reached it whole."""

    answered: int = 0


def answered(response: httpx.Response, mcp: bool) -> bool:
    if response.status_code != 200:
        return False
    body = response.json()
    return not body["result"].get("isError") if mcp else "settings" in json.dumps(body)


async def keep_reading(base: str, token: str, mcp: bool, reads: Reads) -> None:
    """Read student1's calendar settings on one keep-alive connection until the server is gone."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {token}"}, limits=limits, timeout=30
    ) as http:
        while True:
            try:
                if mcp:
                    response = await http.post("/api/mcp", content=CALL, headers=MCP_HEADERS)
                else:
                    response = await http.get("/api/v1/me/calendar-settings")
            except httpx.TransportError:
                return  # the server was killed: this call was not answered
            assert answered(response, mcp), response.text[:500]
            reads.answered += 1


@contextmanager
def served(env: dict[str, str], port: int, log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``campus-mcp serve`` in a process group of its own (so one signal reaches every worker)."""
    command = [str(Path(sys.executable).parent / "campus-mcp"), "serve", "--no-prepare", "--port", str(port), *args]
    with log.open("ab") as out:
        server = subprocess.Popen(
            command,
            env=environment(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        yield server
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


async def up(base: str, log: Path) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=5) as probe:

        async def healthy() -> bool:
            return (await probe.get("/healthz")).status_code == 200

        await wait_for(healthy, within=150, what="serve answering /healthz", log=log)


async def read_then_kill(server: subprocess.Popen[bytes], base: str, tokens: tuple[str, str], at_least: int) -> int:
    """Reads on every connection (MCP with the app's token, REST with the personal one) until
    ``at_least`` answers came back, then SIGKILL to every process of the server at once, calls in
    flight; how many answers the app got."""
    reads = [Reads() for _ in range(CONNECTIONS)]
    loops = [asyncio.create_task(keep_reading(base, tokens[n % 2], n % 2 == 0, r)) for n, r in enumerate(reads)]
    deadline = time.monotonic() + 120
    while sum(r.answered for r in reads) < at_least:
        for task in loops:
            if task.done():
                task.result()  # a connection that failed before the kill fails the test with its reason
        assert time.monotonic() < deadline, f"{at_least} answers did not come within 120 s"
        await asyncio.sleep(0.01)
    os.killpg(server.pid, signal.SIGKILL)
    await asyncio.wait_for(asyncio.gather(*loops), timeout=60)
    server.wait()
    return sum(r.answered for r in reads)


async def personal_token(database_url: str) -> str:
    """A personal access token of student1 for the REST twin (the key the servers share)."""
    settings = settings_of(database_url, secret_key=SHARED_KEY)
    engine = make_engine(database_url)
    try:
        sessions = make_sessions(engine)
        async with sessions() as session:
            student = await student_by_username(session, "student1")
        assert student is not None
        return await PersonalTokens(sessions, settings).create(
            student.id, name="Grade script", scope="settings:read", days=7
        )
    finally:
        await engine.dispose()


async def scalar(database_url: str, query: str) -> int:
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return int(await connection.scalar(text(query)) or 0)
    finally:
        await engine.dispose()


STUDENT1_READS = (
    f"SELECT count(*) FROM student_access WHERE action = '{TOOL}' "
    "AND student_id = (SELECT id FROM students WHERE username = 'student1')"
)


async def test_every_answered_read_is_logged_after_a_sigkill_of_every_worker(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.demo_copy()
    workers = ["--workers", "2"] if database_url.startswith("postgresql") else []
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PUBLIC_URL": base,
        "CAMPUS_MCP_HOST": "127.0.0.1",
        "CAMPUS_MCP_SCHEDULER": "false",  # the jobs would fetch from the campus's servers
        "CAMPUS_MCP_RATE_LIMITS": "false",  # this test is about the log, not the limits
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    issued = await asyncio.to_thread(
        run_command, "token", "--student", "student1", "--scopes", "settings:read", env=env
    )
    assert issued.returncode == 0, issued.stderr
    tokens = (issued.stdout.strip(), await personal_token(database_url))
    log = tmp_path / "serve.log"

    with served(env, port, log, *workers) as first:
        await up(base, log)
        first_round = await read_then_kill(first, base, tokens, at_least=60)
    assert first.returncode == -signal.SIGKILL

    # 1. The next start on this machine writes what the killed processes journaled.
    with served(env, port, log, *workers) as second:
        await up(base, log)

        async def replayed() -> int:
            entries = await scalar(database_url, STUDENT1_READS)
            return entries if entries >= first_round else 0

        entries = await wait_for(replayed, within=60, what=f"{first_round} entries after the restart", log=log)
        assert entries <= first_round + CONNECTIONS, (entries, first_round)  # at most one cut-off call each
        second_round = await read_then_kill(second, base, tokens, at_least=30)

    # 2. With no server running, the privacy office's audit lists every answered call of both rounds.
    audit = await asyncio.to_thread(run_command, "audit", "--student", "student1", "--format", "json", env=env)
    assert audit.returncode == 0, audit.stderr
    reads = [row for row in json.loads(audit.stdout) if row["action"] == TOOL]
    answers = first_round + second_round
    assert answers <= len(reads) <= answers + 2 * CONNECTIONS, (len(reads), first_round, second_round, tail(log))
    assert {row["door"] for row in reads} == {"/api/mcp", "GET /api/v1/me/calendar-settings"}
    assert {row["outcome"] for row in reads} == {"ok"}
    # Every journal written into the database and gone, its row too.
    assert not list((tmp_path / "var" / "access-journal").glob("*/*.jsonl"))
    assert await scalar(database_url, STUDENT1_READS) == len(reads)
    assert await scalar(database_url, "SELECT count(*) FROM student_access_journals") == 0
    assert "Traceback" not in log.read_text(errors="replace"), tail(log)
