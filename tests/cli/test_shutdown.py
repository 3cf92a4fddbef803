"""SIGTERM during requests (issue 15.4), on a real ``campus-mcp serve`` that is the scheduler.

Slow requests (the test plugin's ``GET /race/slow``) are in flight when the test sends SIGTERM:
each finishes with 200 and its answer, a new connection after the signal is refused, the process
ends within ``CAMPUS_MCP_SHUTDOWN_GRACE_SECONDS`` (its lifespan ended, then the signal raised again,
as uvicorn does), and the scheduler lock it held is free the moment it has exited: the test takes it at once (the flock next to the SQLite file always, the
PostgreSQL advisory lock when ``CAMPUS_MCP_TEST_DATABASE_URL`` is set), which is what a standby
does on its next turn.

On PostgreSQL the server is ``serve --workers 2``: uvicorn's supervisor passes the signal on to both
workers, and the listening socket they share must close too (before the fix in serving.py the
supervisor kept it open for the whole grace, so a new connection hung instead of being refused).
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
from campus_mcp.jobs.leader import SchedulerLock, scheduler_lock
from campus_mcp.testing.oauth import free_port

from tests.support.scale_out import (  # both_engines: the database_url fixture
    SHARED_KEY,
    both_engines,  # noqa: F401
    campus_mcp,
    plugin_site,
    run_command,
    running,
    tail,
    wait_for,
)

SLOW_SECONDS = 5.0
IN_FLIGHT = 3
GRACE_SECONDS = 25.0


async def taken_by_the_test(lock: SchedulerLock) -> bool:
    """Whether the test could take the scheduler lock now (it lets go at once if so)."""
    got = await lock.try_acquire()
    await lock.release()
    return got


async def slow_request(base: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        return await client.get("/race/slow", params={"seconds": SLOW_SECONDS})


async def test_sigterm_lets_in_flight_requests_finish_refuses_new_ones_and_frees_the_scheduler_lock(
    database_url: str, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    in_flight = tmp_path / "in-flight"
    in_flight.mkdir()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_DEMO": "false",
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PLUGINS": "race",
        # Two workers outside demo mode need Redis for shared rate limits (campus-mcp check); this
        # test is about stopping, so the limits are off rather than a Redis started.
        "CAMPUS_MCP_RATE_LIMITS": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SCHEDULER_RETRY_SECONDS": "0.5",
        "CAMPUS_MCP_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS),
        "CAMPUS_RACE_TICK_SECONDS": "60",
        "PYTHONPATH": str(plugin_site(tmp_path / "site")),
        "CAMPUS_RACE_IN_FLIGHT_DIR": str(in_flight),
    }
    migrated = await asyncio.to_thread(run_command, "db", "upgrade", env=env)
    assert migrated.returncode == 0, migrated.stderr
    log = tmp_path / "serve.log"
    # PostgreSQL is what several workers need: there the server is two uvicorn workers under one
    # supervisor, which passes the signal on to each.
    workers = ["--workers", "2"] if database_url.startswith("postgresql") else []
    server = campus_mcp("serve", "--no-prepare", "--host", "127.0.0.1", "--port", str(port), *workers, env=env, log=log)
    lock = scheduler_lock(database_url, timeout_seconds=5)
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        with running(server):

            async def healthy() -> bool:
                return (await http.get("/healthz")).status_code == 200

            async def the_scheduler() -> bool:
                return "is the scheduler now" in log.read_text(errors="replace")

            await wait_for(healthy, within=120, what="serve answering /healthz", log=log)
            await wait_for(the_scheduler, within=30, what="serve becoming the scheduler", log=log)
            assert not await taken_by_the_test(lock), "serve is the scheduler: the lock is its own"

            # Each slow request on a connection of its own, in flight before the signal.
            slow = [asyncio.create_task(slow_request(base)) for _ in range(IN_FLIGHT)]

            async def all_in_flight() -> bool:
                return len(list(in_flight.iterdir())) == IN_FLIGHT

            await wait_for(all_in_flight, within=30, what=f"{IN_FLIGHT} slow requests in flight", log=log)
            server.send_signal(signal.SIGTERM)
            signalled = time.monotonic()

            async def refused() -> bool:
                try:
                    async with httpx.AsyncClient(base_url=base, timeout=2) as newcomer:
                        await newcomer.get("/healthz")
                except httpx.ConnectError:
                    return True
                return False

            await wait_for(refused, within=SLOW_SECONDS, what="a new connection refused after SIGTERM", log=log)
            assert not any(task.done() for task in slow), "refused while the slow requests were still in flight"

            answers = await asyncio.gather(*slow)
            for answer in answers:
                assert answer.status_code == 200, answer.text
                assert answer.json()["slept"] == SLOW_SECONDS

            async def exited() -> bool:
                return server.poll() is not None

            await wait_for(exited, within=GRACE_SECONDS, what="serve stopping within the grace", log=log)
            took = time.monotonic() - signalled
            # One process: uvicorn ends a SIGTERM by raising it again once shut down (exit status
            # 143 in a shell), as a supervisor expects of a process it stopped; uvicorn's supervisor
            # of several workers exits 0 once they have. Before that, every lifespan ended.
            expected = 0 if workers else -signal.SIGTERM
            assert server.poll() == expected, f"serve ended with {server.poll()}\n{tail(log)}"
            assert "Application shutdown complete." in log.read_text(errors="replace")
            assert took < GRACE_SECONDS, f"serve took {took:.1f}s to stop"
            # Free the moment it has gone: no waiting for a connection to time out.
            assert await taken_by_the_test(lock), "the scheduler lock is still held after serve exited"
    said = log.read_text(errors="replace")
    assert "Traceback" not in said, said[-3000:]
