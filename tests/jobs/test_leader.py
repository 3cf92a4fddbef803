"""One scheduler across processes (issue 15.3): two ``campus-mcp worker`` processes started at once
on one database run each due job once, from one of them; SIGKILL that one and the other takes over
within seconds. On SQLite (the file lock) always, on PostgreSQL (the advisory lock on its own
connection) when ``CAMPUS_MCP_TEST_DATABASE_URL`` is set.
"""

from __future__ import annotations

import asyncio
import re
import signal
import time
from pathlib import Path

from tests.support.scale_out import (  # both_engines: the database_url fixture
    SHARED_KEY,
    both_engines,  # noqa: F401
    campus_mcp,
    job_runs,
    plugin_site,
    run_command,
    running,
    wait_for,
)

TICK_SECONDS = 1.0
RETRY_SECONDS = 0.5


def race_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_DEMO": "false",
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PLUGINS": "race",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SCHEDULER_RETRY_SECONDS": str(RETRY_SECONDS),
        "CAMPUS_RACE_TICK_SECONDS": str(TICK_SECONDS),
        "PYTHONPATH": str(plugin_site(tmp_path / "site")),
    }


def pids_of(runs: list[dict[str, object]]) -> list[int]:
    return [int(m[1]) for run in runs if (m := re.fullmatch(r"pid (\d+)", str(run["summary"])))]


async def test_two_workers_run_a_due_job_once_and_a_standby_takes_over_from_a_killed_one(
    database_url: str, tmp_path: Path
) -> None:
    env = race_env(database_url, tmp_path)
    migrated = run_command("db", "upgrade", env=env)
    assert migrated.returncode == 0, migrated.stderr
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    workers = [campus_mcp("worker", env=env, log=log) for log in logs]
    with running(*workers):

        async def ok_runs() -> list[dict[str, object]]:
            return [r for r in await job_runs(database_url, "race.tick") if r["outcome"] == "ok"]

        async def three() -> bool:
            return len(await ok_runs()) >= 3

        await wait_for(three, within=60, what="three runs of race.tick", log=logs[0])
        begun = time.monotonic()
        await asyncio.sleep(3 * TICK_SECONDS)
        runs = await ok_runs()
        elapsed = time.monotonic() - begun
        # Every run from one process: the other is a standby. Two schedulers would each run every tick.
        assert len(set(pids_of(runs))) == 1, runs
        (leader_pid,) = set(pids_of(runs))
        assert leader_pid in {w.pid for w in workers}
        assert len(runs) <= 3 + elapsed / TICK_SECONDS + 2, "more runs than ticks: a job ran twice"

        leader = next(w for w in workers if w.pid == leader_pid)
        standby = next(w for w in workers if w.pid != leader_pid)
        leader.send_signal(signal.SIGKILL)
        leader.wait()
        killed_at = time.monotonic()

        async def standby_ran() -> bool:
            return standby.pid in pids_of(await ok_runs())

        await wait_for(standby_ran, within=60, what="a run by the standby after the SIGKILL", log=logs[1])
        took_over = time.monotonic() - killed_at
        assert took_over < 30, f"the standby took {took_over:.1f}s to take over"
        assert standby.poll() is None
    # A standby says it is one, then that it became the scheduler: the operator can see who runs jobs.
    assert "is the scheduler now" in logs[workers.index(standby)].read_text()
