"""Helpers of the several-process tests (test_leader, test_workers, test_faults): a tiny plugin the
server subprocesses load, `campus-mcp worker` subprocesses, and the job runs they record.

The plugin ``race`` is installed for the subprocesses only: a module and its ``.dist-info`` (with
the ``campus_mcp`` entry point) in a folder on their ``PYTHONPATH``, so the test's own process and
the shared virtualenv never see it. Its job ``race.tick`` runs every ``CAMPUS_RACE_TICK_SECONDS``
and records the pid of the process that ran it; its route ``GET /race/slow`` answers after
``seconds``, a request that is in flight while the test signals the server (a file for each
in ``CAMPUS_RACE_IN_FLIGHT_DIR`` while it is).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest
from campus_mcp.testing import TestDatabases
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

T = TypeVar("T")

# The one deployment key every process of a several-process test shares (a key of its own is refused).
SHARED_KEY = "several-process-tests-only-" + "k" * 32

PLUGIN = """
import asyncio
import os
import uuid

from litestar import get

from campus_mcp import Interval, Job, JobOutcome, PluginInfo, RouteGroup, hookimpl

TICK_SECONDS = float(os.environ.get("CAMPUS_RACE_TICK_SECONDS", "1"))


async def tick(_context):
    await asyncio.sleep(float(os.environ.get("CAMPUS_RACE_TICK_WORK_SECONDS", "0")))
    return JobOutcome(items=1, summary=f"pid {os.getpid()}")


@get("/race/slow", sync_to_thread=False)
async def slow(seconds: float) -> dict:
    # A file for each request inside, in CAMPUS_RACE_IN_FLIGHT_DIR if set: the test counts them
    # across every worker process and signals once all are in flight.
    folder = os.environ.get("CAMPUS_RACE_IN_FLIGHT_DIR")
    mark = os.path.join(folder, f"{os.getpid()}-{uuid.uuid4().hex}") if folder else None
    if mark:
        open(mark, "w").close()
    try:
        await asyncio.sleep(seconds)
    finally:
        if mark:
            os.remove(mark)
    return {"slept": seconds, "pid": os.getpid()}


@hookimpl
def campus_plugin_info():
    return PluginInfo(name="race", version="1", title="Race", description="Several-process tests.")


@hookimpl
def register_jobs():
    # minutes as a fraction: APScheduler's interval takes any number; seconds keep the tests short.
    return [Job(id="race.tick", description="Records its pid.", trigger=Interval(minutes=TICK_SECONDS / 60), run=tick)]


@hookimpl
def register_routes():
    return [RouteGroup(handlers=[slow], exempt={"GET /race/slow": "test route"})]
"""


def plugin_site(folder: Path) -> Path:
    """A folder to put on a subprocess's PYTHONPATH that installs the ``race`` plugin there."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "campus_race.py").write_text(PLUGIN)
    info = folder / "campus_race-1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: campus-race\nVersion: 1\n")
    (info / "entry_points.txt").write_text("[campus_mcp]\nrace = campus_race\n")
    return folder


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without its CAMPUS_MCP_ variables, plus ``env`` (as testing_serve)."""
    own = {key: value for key, value in os.environ.items() if not key.startswith("CAMPUS_MCP_")}
    return {**own, **env}


def campus_mcp(*args: str, env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``campus-mcp ARGS`` of this virtualenv as a subprocess, its output in ``log``."""
    command = [str(Path(sys.executable).parent / "campus-mcp"), *args]
    with log.open("ab") as out:
        # The virtualenv's own console script with the test's arguments, never a shell.
        return subprocess.Popen(
            command, env=environment(env), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


def run_command(*args: str, env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "campus-mcp"), *args]
    return subprocess.run(command, env=environment(env), capture_output=True, text=True, timeout=timeout, check=False)


@contextlib.contextmanager
def running(*processes: subprocess.Popen[bytes]) -> Iterator[None]:
    """Stop (SIGTERM, then SIGKILL) whichever of ``processes`` still runs when the block ends."""
    try:
        yield
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def job_runs(database_url: str, job_id: str | None = None) -> list[dict[str, Any]]:
    """Every recorded run (of ``job_id``), oldest first, as dicts."""
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text(
                    "SELECT id, job_id, outcome, summary, error FROM job_runs "
                    + ("WHERE job_id = :job " if job_id else "")
                    + "ORDER BY id"
                ),
                {"job": job_id} if job_id else {},
            )
            return [dict(row._mapping) for row in rows]
    finally:
        await engine.dispose()


def tail(log: Path | None) -> str:
    """The end of a subprocess's output, where the reason of a failure is."""
    return log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""


async def wait_for(condition: Callable[[], Awaitable[T]], *, within: float, what: str, log: Path | None = None) -> T:
    """Poll ``condition`` until it is truthy; fail with ``what`` (and the end of ``log``) after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        with contextlib.suppress(Exception):
            found = await condition()
            if found:
                return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within:g}s\n{tail(log)}")
        await asyncio.sleep(0.1)


@pytest.fixture(params=["sqlite", "postgresql"], name="database_url")
async def both_engines(
    request: pytest.FixtureRequest, campus_databases: TestDatabases, tmp_path: Path
) -> AsyncIterator[str]:
    """An empty campus database on SQLite, and on PostgreSQL when the run has one: a test module
    takes it with ``from tests.support.scale_out import both_engines``."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"
        return
    if not campus_databases.postgres:
        pytest.skip("PostgreSQL part: set CAMPUS_MCP_TEST_DATABASE_URL")
    url = await campus_databases.empty()
    yield url
    await campus_databases.drop(url)
