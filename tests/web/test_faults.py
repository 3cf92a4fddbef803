"""Faults injected on real servers (issue 15.4).

- A process killed with SIGKILL in the middle of a Banner import (the fake Banner on loopback,
  slowed so the kill lands while the term's pages are read): the term is untouched, the run
  left at "running" is recorded as failed with the reason when the next process (a worker) starts,
  and the next run imports the whole term. SQLite always, PostgreSQL when configured.
- The database unreachable for a while (PostgreSQL through a loopback TCP proxy the test stalls):
  ``/healthz`` stays 200, ``/readyz`` says 503 database unreachable, a tool call gets a tool error
  saying so within the timeout, and the server answers again without a restart once the proxy
  forwards again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_mcp.testing import TestDatabases, serve
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.support.scale_out import (  # both_engines: the database_url fixture
    SHARED_KEY,
    both_engines,  # noqa: F401
    campus_mcp,
    job_runs,
    run_command,
    running,
    tail,
    wait_for,
)

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
JOB = "catalog.sections_sync"


async def scalar(database_url: str, query: str) -> Any:
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return await connection.scalar(text(query))
    finally:
        await engine.dispose()


async def finished(process: subprocess.Popen[bytes], within: float) -> int:
    """Wait for ``process`` without blocking this loop (the fake Banner answers on it)."""
    deadline = time.monotonic() + within
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the process did not finish within {within:g}s")
        await asyncio.sleep(0.1)
    return process.returncode


async def test_a_banner_import_killed_midway_leaves_the_term_untouched_and_the_run_failed(
    database_url: str, tmp_path: Path
) -> None:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE}")
    sections = json.loads(BANNER_FIXTURE.read_text())["data"]
    # Half a second a request: four pages of 50 take two seconds, time to kill after the second.
    fake = FakeBanner(sections=sections, delay_seconds=0.5)
    async with serve_fake_banner(fake) as banner_url:
        env = {
            "CAMPUS_MCP_DATABASE_URL": database_url,
            "CAMPUS_MCP_DEMO": "false",
            "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
            "CAMPUS_MCP_PLUGINS": "catalog",
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
            "CAMPUS_MCP_SCHEDULER_RETRY_SECONDS": "0.5",
            "CAMPUS_MCP_CATALOG_BANNER_URL": banner_url,
            "CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP": "true",
            "CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE": "6000",
            "CAMPUS_MCP_CATALOG_BANNER_PAGE_SIZE": "50",
        }
        migrated = await asyncio.to_thread(run_command, "db", "upgrade", env=env)
        assert migrated.returncode == 0, migrated.stderr

        log = tmp_path / "import.log"
        importing = campus_mcp("jobs", "run", JOB, env=env, log=log)
        with running(importing):

            async def midway() -> bool:
                return sum(r.endpoint == "searchResults/searchResults" for r in fake.seen) >= 2

            await wait_for(midway, within=90, what="the import reading its second page", log=log)
            importing.send_signal(signal.SIGKILL)
            importing.wait()
        [left] = await job_runs(database_url, JOB)
        assert left["outcome"] == "running", left
        assert await scalar(database_url, "SELECT count(*) FROM catalog_sections") == 0  # untouched
        assert await scalar(database_url, "SELECT count(*) FROM catalog_terms") == 0

        # The next process to start (a worker: it wins the scheduler election) records what happened.
        worker_log = tmp_path / "worker.log"
        worker = campus_mcp("worker", env=env, log=worker_log)
        with running(worker):

            async def recorded() -> list[dict[str, Any]]:
                return [r for r in await job_runs(database_url, JOB) if r["outcome"] == "failed"]

            [failed] = await wait_for(recorded, within=60, what="the killed run recorded as failed", log=worker_log)
        assert failed["id"] == left["id"]
        assert str(failed["error"]).startswith("abandoned: its process (command on "), failed
        assert f"pid {importing.pid}) stopped before the run finished" in str(failed["error"])

        # The next run does the whole term.
        again = campus_mcp("jobs", "run", JOB, env=env, log=log)
        with running(again):
            assert await finished(again, 120) == 0, tail(log)
        runs = await job_runs(database_url, JOB)
        assert [r["outcome"] for r in runs] == ["failed", "ok"], runs
        assert await scalar(database_url, "SELECT count(*) FROM catalog_sections") == len(sections) == 157


class StallingProxy:
    """A loopback TCP proxy to the database that the test can stall: while stalled, the open
    connections are cut and new ones are accepted but never answered (a database that stopped
    answering, the case that hangs a client without timeouts). Runs on a thread of its own, since
    the server's start-up waits block the test's loop."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.stalled = threading.Event()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            if self.stalled.is_set():
                await reader.read()  # hold it open, answer nothing
                return
            up_reader, up_writer = await asyncio.open_connection(*self.target)
            self._writers.add(up_writer)
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                if self.stalled.is_set():
                    break
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    def stall(self) -> None:
        self.stalled.set()
        self._loop.call_soon_threadsafe(self._cut)

    def _cut(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def resume(self) -> None:
        self.stalled.clear()

    @contextlib.contextmanager
    def running(self) -> Iterator[StallingProxy]:
        self._thread.start()
        self._ready.wait(10)
        try:
            yield self
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)


async def call(mcp_url: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, float]:
    began = time.monotonic()
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(mcp_url, http_client=http)) as session,  # type: ignore[arg-type]
    ):
        result = await session.call_tool(tool, arguments)
    return result, time.monotonic() - began


async def test_the_database_unreachable_for_a_while(campus_databases: TestDatabases, tmp_path: Path) -> None:
    if not campus_databases.postgres:
        pytest.skip("PostgreSQL part: set CAMPUS_MCP_TEST_DATABASE_URL")
    database_url = await campus_databases.empty()
    real = make_url(database_url)
    timeout = 2.0
    with StallingProxy(real.host or "127.0.0.1", real.port or 5432).running() as proxy:
        through = real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        env = {
            "CAMPUS_MCP_DATABASE_URL": through,
            "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
            "CAMPUS_MCP_PLUGINS": "catalog",
            "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_DATABASE_TIMEOUT_SECONDS": str(timeout),
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        }
        with serve(env, log_path=tmp_path / "serve.log") as served:
            async with httpx.AsyncClient(base_url=served.base, timeout=30) as http:
                assert (await http.get("/readyz")).json() == {"status": "ready", "database": "ok"}
                answer, _ = await call(served.mcp_url, "search_courses", {"q": "calculus"})
                assert not answer.is_error, answer.content

                proxy.stall()
                assert (await http.get("/healthz")).status_code == 200  # alive: no restart needed
                began = time.monotonic()
                ready = await http.get("/readyz")
                assert time.monotonic() - began < timeout + 2
                assert ready.status_code == 503
                assert ready.json()["database"] == "unreachable"
                assert "Try again in a minute" in ready.json()["message"]
                answer, seconds = await call(served.mcp_url, "search_courses", {"q": "calculus"})
                assert answer.is_error
                said = answer.content[0].text
                assert "the campus database cannot be reached right now" in said, said
                assert "Traceback" not in said and "asyncpg" not in said
                assert seconds < 3 * timeout + 3, f"the tool call took {seconds:.1f}s"

                proxy.resume()

                async def ready_again() -> bool:
                    return (await http.get("/readyz")).status_code == 200

                await wait_for(ready_again, within=30, what="/readyz 200 after the database came back")
                answer, _ = await call(served.mcp_url, "search_courses", {"q": "calculus"})
                assert not answer.is_error, answer.content
        log = (tmp_path / "serve.log").read_text()
        assert "Traceback" not in log.split("Serving", 1)[-1], log[-3000:]
    await campus_databases.drop(database_url)
