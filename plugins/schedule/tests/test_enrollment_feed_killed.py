"""``campus-mcp import enrollments`` killed with SIGKILL in the middle of its write (issue 30, point 5):
the schedules are the old ones, row for row, never half of the new file; the next run applies the
whole file.

The kill has to land inside the import's one transaction. The test holds a lock the import needs:
on PostgreSQL a row lock on one enrollment the file takes away, so the import has inserted its new
rows and waits in its DELETE (seen in ``pg_stat_activity``) when it is killed; on SQLite the write
lock, so it is killed while waiting to write its first row.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from campus_mcp.testing import CampusHarness
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from .test_enrollment_feed import FEED, IMPORT_JOB, _dump, _import, _schedules, _write

# Fall 2026 complete: student1 keeps 21001 and loses 21002, student2 loses 21003, student3 gains 21002.
COMPLETE = "student1,202710,21001\nstudent3,202710,21002\n*,202710,COMPLETE\n"
AFTER = {
    ("student1", "202710", "21001", "feed"),
    ("student2", "202630", "31001", "feed"),
    ("student3", "202710", "21002", "feed"),
}


def _import_process(campus: CampusHarness, path: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_PLUGINS": "catalog,schedule",
        "CAMPUS_MCP_CONFIG": str(path.parent / "no-config.toml"),
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key",
        "PATH": str(Path(sys.executable).parent),
    }
    with log.open("ab") as out:
        return subprocess.Popen(
            [str(Path(sys.executable).parent / "campus-mcp"), "import", "enrollments", str(path)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def _said(log: Path) -> str:
    return log.read_text(errors="replace")


def _has_open(pid: int, database: str) -> bool:
    """Whether process ``pid`` has the file ``database`` open (it connected)."""
    wanted = Path(database).resolve()
    try:
        return any(fd.resolve() == wanted for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


async def _until(condition: Callable[[], Awaitable[bool]], within: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + within
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within:g}s\n{_said(log)}")
        await asyncio.sleep(0.1)


async def _kill_while_locked_out(campus: CampusHarness, path: Path, log: Path) -> None:
    """Start the import with a lock it needs held by the test, SIGKILL it while it waits, let go."""
    url = campus.settings.database_url
    if url.startswith("postgresql"):
        engine = create_async_engine(url, poolclass=NullPool)
        try:
            async with engine.connect() as holder, holder.begin():
                await holder.execute(text("SELECT id FROM schedule_enrollments WHERE crn = '21003' FOR UPDATE"))
                process = _import_process(campus, path, log)
                try:

                    async def waits_in_its_delete() -> bool:
                        async with engine.connect() as watcher:
                            found = await watcher.scalar(
                                text(
                                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                    "AND wait_event_type = 'Lock' AND query ILIKE 'DELETE FROM schedule_enrollments%'"
                                )
                            )
                        return bool(found)

                    await _until(waits_in_its_delete, 30, "the import waiting in its DELETE", log)
                finally:
                    process.send_signal(signal.SIGKILL)
                    process.wait(timeout=10)
        finally:
            await engine.dispose()
    else:
        database = make_url(url).database
        assert database
        holder = sqlite3.connect(database, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            process = _import_process(campus, path, log)
            try:

                async def has_the_database_open() -> bool:
                    return _has_open(process.pid, database)

                await _until(has_the_database_open, 30, "the import opening the database", log)
                # It reads the students, terms and sections, then waits (30 s at most) to write.
                await asyncio.sleep(3)
                assert process.poll() is None, _said(log)
            finally:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    assert process.returncode == -signal.SIGKILL


async def test_an_enrollment_import_killed_midway_leaves_the_old_rows_and_the_next_run_completes(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    assert (await _import(schedule_campus, _write(tmp_path, "full.csv", FEED))).exit_code == 0
    before = await _dump(schedule_campus)
    complete = _write(tmp_path, "complete.csv", COMPLETE)

    await _kill_while_locked_out(schedule_campus, complete, tmp_path / "killed.log")

    # Every row as it was (ids and times too): not one of the new file's rows, not one removed.
    assert await _dump(schedule_campus) == before
    assert len(await schedule_campus.job_runs(IMPORT_JOB)) == 1  # the killed run recorded nothing

    again = await _import(schedule_campus, complete)
    assert again.exit_code == 0, again.output
    assert "2 row(s): 1 added, 1 already there, 2 removed (complete terms: 202710)" in again.output
    assert _schedules(await _dump(schedule_campus)) == AFTER
    runs = await schedule_campus.job_runs(IMPORT_JOB)
    assert len(runs) == 2 and runs[-1].items == 2, runs
