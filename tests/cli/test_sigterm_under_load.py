"""SIGTERM while keep-alive connections are busy with MCP tool calls (issue 30, point 5).

A real ``campus-mcp serve`` of the demo campus (SQLite, or PostgreSQL when the suite runs on it).
Student1's personal token (``campus-mcp token``) drives it over plain HTTP, each client on one
keep-alive connection of its own (``max_connections=1``): readers call ``search_sections`` back to
back, a writer sets student1's sections of a term to one whole list of three CRNs, then to
another; two more connections stay idle after one request. Mid-load the test sends SIGTERM. What
a client and the operator see:

- every call answered is a whole answer (200, a JSON-RPC result, not a tool error), calls in
  flight at the signal too; a call that is not answered met a clean close (refused, or closed
  before any byte of an answer: uvicorn closes a connection it sees idle, and a request that
  reached it at that moment is never read, so never run), never a half answer or a server error;
- a new connection is refused soon after the signal;
- the process ends on its own well within ``CAMPUS_MCP_SHUTDOWN_GRACE_SECONDS`` (idle keep-alive
  connections do not hold it), as uvicorn ends a SIGTERM (test_shutdown.py), after its lifespan;
- the database holds exactly the list of the writer's last answered call (no call half-applied,
  none applied without an answer), and the access log holds one row for each answered write (its
  last batch is written at shutdown);
- the log has no traceback.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from campus_mcp.testing import TestDatabases
from campus_mcp.testing.oauth import free_port
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.support.scale_out import SHARED_KEY, campus_mcp, run_command, running, tail, wait_for

GRACE_SECONDS = 20.0
# Well within the grace: every call is short, and an idle connection must not be waited for.
STOPS_WITHIN_SECONDS = 10.0
READERS = 4
LONG_QUERY = (
    "{ sections(limit: 50) { total sections { crn title course { code title "
    "offered_sections(limit: 10) { total sections { crn title section_number course { code } } } } } } }"
)
IDLE = 2
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def tool_call(name: str, arguments: dict[str, Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    ).encode()


@dataclasses.dataclass
class Calls:
    """What one client saw: the structured answers of its calls in order, then how it ended."""

    answers: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    ended: str = ""  # how the connection ended: "refused" or "closed"
    error: str = ""  # the client's error at the end


def structured(response: httpx.Response) -> dict[str, Any]:
    """The tool's answer, asserted whole: a 200 with a JSON-RPC result that is not a tool error."""
    assert response.status_code == 200, response.text[:500]
    body = response.json()  # a half answer would not parse
    assert "result" in body, body
    assert not body["result"].get("isError"), body["result"]
    answer: dict[str, Any] = body["result"]["structuredContent"]
    return answer


async def keep_calling(base: str, token: str, calls: Calls, arguments_of: Any, name: str) -> None:
    """Calls ``name`` on one keep-alive connection until the server closes it."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    headers = {**HEADERS, "Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=30) as http:
        turn = 0
        while True:
            try:
                response = await http.post("/api/mcp", content=tool_call(name, arguments_of(turn)))
            except httpx.ConnectError:
                calls.ended, calls.error = "refused", repr(sys.exc_info()[1])
                return
            except httpx.RemoteProtocolError as closed:
                # Closed before any byte of an answer; "without sending complete message body"
                # would be a half answer, and fails here.
                assert "without sending a response" in str(closed), repr(closed)
                calls.ended, calls.error = "closed", repr(sys.exc_info()[1])
                return
            except httpx.ReadError as reset:
                # The request met the close of an idle connection (a reset): never read, never run.
                assert "reset" in str(reset).lower() or not str(reset), repr(reset)
                calls.ended, calls.error = "closed", repr(sys.exc_info()[1])
                return
            calls.answers.append(structured(response))
            turn += 1


async def stay_idle(base: str) -> httpx.AsyncClient:
    """A client whose one keep-alive connection stays open and idle after one request."""
    http = httpx.AsyncClient(base_url=base, timeout=10, limits=httpx.Limits(max_connections=1))
    assert (await http.get("/healthz")).status_code == 200
    return http


async def stored(database_url: str, term: str) -> tuple[set[str], int]:
    """Student1's CRNs of ``term``, and the access log's rows of student1's set_my_sections."""
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            student = "(SELECT id FROM students WHERE username = 'student1')"
            crns = await connection.scalars(
                text(f"SELECT crn FROM schedule_enrollments WHERE student_id = {student} AND term_uid = :term"),
                {"term": term},
            )
            rows = await connection.scalar(
                text(f"SELECT count(*) FROM student_access WHERE student_id = {student} AND action = 'set_my_sections'")
            )
            return set(crns.all()), int(rows or 0)
    finally:
        await engine.dispose()


async def test_sigterm_under_load_answers_whole_refuses_new_stops_and_keeps_the_data_whole(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.demo_copy()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PUBLIC_URL": base,
        "CAMPUS_MCP_SCHEDULER": "false",  # the jobs would fetch from the campus's servers
        "CAMPUS_MCP_RATE_LIMITS": "false",  # this test is about stopping, not about limits
        # A plain HTTP client cannot be asked: the deployment lets its writes through (no code to
        # pass back), so that every write call is one request.
        "CAMPUS_MCP_CONFIRMATION_FALLBACK": "apply",
        "CAMPUS_MCP_CATALOG_GRAPHQL_IN_FLIGHT": str(READERS),  # every reader's query runs
        "CAMPUS_MCP_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS),
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    log = tmp_path / "serve.log"
    server = campus_mcp("serve", "--no-prepare", "--host", "127.0.0.1", "--port", str(port), env=env, log=log)
    with running(server):
        async with httpx.AsyncClient(base_url=base, timeout=5) as probe:

            async def healthy() -> bool:
                return (await probe.get("/healthz")).status_code == 200

            await wait_for(healthy, within=150, what="serve answering /healthz", log=log)
        issued = await asyncio.to_thread(
            run_command, "token", "--student", "student1", "--scopes", "catalog schedule:read schedule:write", env=env
        )
        assert issued.returncode == 0, issued.stderr
        token = issued.stdout.strip()

        # Two whole lists of three sections of one term: the writer sets one, then the other.
        async with httpx.AsyncClient(base_url=base, headers={**HEADERS, "Authorization": f"Bearer {token}"}) as http:
            page = structured(await http.post("/api/mcp", content=tool_call("search_sections", {"limit": 6})))
        term = page["term"]["uid"]
        crns = [section["crn"] for section in page["sections"]]
        lists = (crns[:3], crns[3:6])
        assert len(set(crns)) == 6, page

        readers = [Calls() for _ in range(READERS)]
        writer = Calls()
        # Two readers make short calls, two long ones (a GraphQL query near the cost limit, a few
        # hundred milliseconds), so calls are in flight when the signal comes.
        reads = [
            ("search_sections", lambda turn: {"subject": "COMP", "offset": turn % 5}),
            ("search_sections", lambda turn: {"subject": "MATH", "offset": turn % 5}),
            ("catalog_graphql", lambda turn: {"query": LONG_QUERY}),
            ("catalog_graphql", lambda turn: {"query": LONG_QUERY}),
        ]
        loops = [
            asyncio.create_task(keep_calling(base, token, calls, arguments_of, name))
            for calls, (name, arguments_of) in zip(readers, reads, strict=True)
        ]
        loops.append(
            asyncio.create_task(
                keep_calling(
                    base,
                    token,
                    writer,
                    lambda turn: {"term": term, "crns": lists[turn % 2]},
                    "set_my_sections",
                )
            )
        )
        idle = [await stay_idle(base) for _ in range(IDLE)]
        try:

            async def busy() -> bool:
                return any(task.done() for task in loops) or all(len(c.answers) >= 3 for c in [*readers, writer])

            await wait_for(busy, within=60, what="every client answered three times", log=log)
            for task in loops:
                if task.done():
                    task.result()  # a client that failed before the signal fails the test with its reason
            ended = [calls for calls in [*readers, writer] if calls.ended]
            assert not ended, f"a connection ended before the signal: {ended}\n{tail(log)}"
            server.send_signal(signal.SIGTERM)
            sent_at = time.monotonic()

            async def refused() -> bool:
                try:
                    async with httpx.AsyncClient(base_url=base, timeout=2) as newcomer:
                        await newcomer.get("/healthz")
                except httpx.ConnectError:
                    return True
                return False

            await wait_for(refused, within=5, what="a new connection refused after SIGTERM", log=log)
            await asyncio.wait_for(asyncio.gather(*loops), timeout=GRACE_SECONDS)

            async def exited() -> bool:
                return server.poll() is not None

            await wait_for(exited, within=GRACE_SECONDS, what="serve stopping within the grace", log=log)
            took = time.monotonic() - sent_at
        finally:
            for task in loops:
                task.cancel()
            for http in idle:
                await http.aclose()

    said = log.read_text(errors="replace")
    # One process ends a SIGTERM by raising it again once its lifespan has ended (test_shutdown.py).
    assert server.returncode == -signal.SIGTERM, f"serve ended with {server.returncode}\n{tail(log)}"
    assert "Application shutdown complete." in said, tail(log)
    assert took < STOPS_WITHIN_SECONDS, f"serve took {took:.1f}s to stop (grace {GRACE_SECONDS:g}s)\n{tail(log)}"
    assert "graceful shutdown exceeded" not in said, tail(log)
    assert "Traceback" not in said, said[-3000:]
    # Each client's connection ended cleanly: closed before any byte of an answer (a request that
    # met the close of a connection uvicorn saw idle: never read, never run) or refused after.
    for calls in [*readers, writer]:
        assert calls.ended in ("refused", "closed"), calls
    for calls in readers[:2]:
        assert all(answer["sections"] for answer in calls.answers)
    for calls in readers[2:]:
        assert all(answer["data"]["sections"]["sections"] and not answer.get("errors") for answer in calls.answers)
    # Calls were in flight at the signal: answered (logged) after uvicorn began shutting down.
    stopping = said[said.index("Shutting down") :]
    assert re.search(r"tools/call \w+: ok", stopping), tail(log)
    # What the last answer said is what is stored: the whole list, no mix of the two.
    last = writer.answers[-1]
    assert last["term"]["uid"] == term
    shown = {course["crn"] for course in last["courses"]}
    kept, logged = await stored(database_url, term)
    assert kept == shown == set(lists[(len(writer.answers) - 1) % 2]), (kept, shown)
    # Every answered write is in the access log, the last batch too (written at shutdown).
    assert logged == len(writer.answers), (logged, len(writer.answers))
    await campus_databases.drop(database_url)
