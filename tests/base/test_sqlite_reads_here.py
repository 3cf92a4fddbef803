"""A quick SQLite read runs in the event loop's thread, with no trip to aiosqlite's
(host/campus_mcp/sqlite_driver.py, ReadsHere): its first run is in the thread and timed there;
a read past its budget here is stopped, answered from the thread, and sent there from then on;
writes, reads inside a write's transaction, databases that are not WAL and failing reads keep the
thread, with its answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from campus_mcp.base.db import make_engine
from campus_mcp.base.speedups import sqlite_driver
from sqlalchemy import Column, Integer, MetaData, String, Table, bindparam, exc, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

NOTES = Table(
    "notes",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("body", String, nullable=False),
)
# A read whose work grows with :n (counting to n), to run past a budget on purpose.
COUNTING = "SELECT (WITH RECURSIVE counted(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM counted WHERE i < :n) SELECT count(*) FROM counted)"


@pytest.fixture(autouse=True)
def reads_in_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mechanism under test is opt-in (sqlite_reads_in_loop), and on whatever the run's switches."""
    monkeypatch.setenv("CAMPUS_MCP_SPEEDUPS", "on")
    monkeypatch.setenv("CAMPUS_MCP_SQLITE_READS_IN_LOOP", "true")


@pytest.fixture(autouse=True)
def generous_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read of this tiny table is quick whatever the machine's load (the budget is wall time,
    and a loaded CI machine can take the core away for milliseconds): the test that wants a read
    past its budget sets a small one around it."""
    monkeypatch.setattr(sqlite_driver, "QUICK_READ_S", 1.0)


@pytest_asyncio.fixture
async def engine(tmp_path: Path, thread_runs: list[Callable[[], Any]]) -> AsyncIterator[AsyncEngine]:
    made = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", pool_size=2, max_overflow=0)
    async with made.begin() as connection:
        await connection.run_sync(NOTES.metadata.create_all)
        await connection.execute(insert(NOTES), [{"body": "kept"}, {"body": "also kept"}])
    yield made
    await made.dispose()


async def _trips(
    thread_runs: list[Callable[[], Any]], connection: AsyncConnection, statement: Any, **params: Any
) -> tuple[int, list[Any]]:
    """How many functions aiosqlite's thread ran for one statement, and its rows."""
    before = len(thread_runs)
    rows = [tuple(row) for row in (await connection.execute(statement, params)).all()]
    return len(thread_runs) - before, rows


async def test_a_read_seen_quick_runs_here_the_next_times(
    engine: AsyncEngine, thread_runs: list[Callable[[], Any]]
) -> None:
    bodies = select(NOTES.c.body).order_by(NOTES.c.id)
    async with engine.connect() as connection:
        assert await _trips(thread_runs, connection, bodies) == (1, [("kept",), ("also kept",)])
        assert await _trips(thread_runs, connection, bodies) == (0, [("kept",), ("also kept",)])
        # Other values of the same SQL are the same read.
        by_id = select(NOTES.c.body).where(NOTES.c.id == bindparam("wanted"))
        assert await _trips(thread_runs, connection, by_id, wanted=1) == (1, [("kept",)])
        assert await _trips(thread_runs, connection, by_id, wanted=2) == (0, [("also kept",)])
    # Another pooled connection of the engine: the read is known quick there too.
    async with engine.connect() as first, engine.connect() as second:
        await first.execute(text("SELECT 1"))
        assert await _trips(thread_runs, second, bodies) == (0, [("kept",), ("also kept",)])


async def test_a_read_here_sees_what_another_connection_committed(
    engine: AsyncEngine, thread_runs: list[Callable[[], Any]]
) -> None:
    bodies = select(NOTES.c.body).order_by(NOTES.c.id)
    async with engine.connect() as reader:
        await reader.execute(bodies)
        async with engine.begin() as writer:
            await writer.execute(insert(NOTES).values(body="new"))
        assert await _trips(thread_runs, reader, bodies) == (0, [("kept",), ("also kept",), ("new",)])


async def test_a_read_past_its_budget_is_answered_from_the_thread_and_sent_there_after(
    engine: AsyncEngine, thread_runs: list[Callable[[], Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = text(COUNTING)
    async with engine.connect() as connection:
        assert await _trips(thread_runs, connection, counting, n=3) == (1, [(3,)])
        # Known quick, so tried here; far past a budget of 0.5 ms: stopped, then run in the thread.
        monkeypatch.setattr(sqlite_driver, "QUICK_READ_S", 0.0005)
        assert await _trips(thread_runs, connection, counting, n=300_000) == (1, [(300_000,)])
        monkeypatch.setattr(sqlite_driver, "QUICK_READ_S", 1.0)
        # Sent to the thread even for a small n, where it is timed quick again.
        assert await _trips(thread_runs, connection, counting, n=3) == (1, [(3,)])
        assert await _trips(thread_runs, connection, counting, n=4) == (0, [(4,)])


async def test_writes_what_is_not_a_select_and_reads_in_a_write_transaction_go_to_the_thread(
    engine: AsyncEngine, thread_runs: list[Callable[[], Any]]
) -> None:
    with_bodies = text("WITH kept AS (SELECT body FROM notes) SELECT count(*) FROM kept")
    bodies = select(NOTES.c.body).order_by(NOTES.c.id)
    async with engine.connect() as connection:
        assert (await _trips(thread_runs, connection, bodies))[0] == 1  # known quick from now on
    async with engine.begin() as connection:
        assert (await _trips(thread_runs, connection, bodies))[0] == 0
        for _ in range(2):
            before = len(thread_runs)
            await connection.execute(insert(NOTES).values(body="written"))
            assert len(thread_runs) - before >= 1
        assert (await _trips(thread_runs, connection, with_bodies))[0] == 1
        assert await _trips(thread_runs, connection, with_bodies) == (1, [(4,)])
        # A read after a write, in its transaction: with the write, in the thread.
        assert await _trips(thread_runs, connection, bodies) == (
            1,
            [("kept",), ("also kept",), ("written",), ("written",)],
        )
    async with engine.connect() as connection:
        assert (await connection.execute(select(NOTES.c.body).where(NOTES.c.id > 2))).scalars().all() == [
            "written",
            "written",
        ]


async def test_a_failing_read_gives_sqlalchemys_error_from_the_thread(
    engine: AsyncEngine, thread_runs: list[Callable[[], Any]]
) -> None:
    bodies = select(NOTES.c.body).order_by(NOTES.c.id)
    async with engine.connect() as connection:
        await connection.execute(bodies)
        async with engine.begin() as other:
            await other.execute(text("DROP TABLE notes"))
        before = len(thread_runs)
        with pytest.raises(exc.OperationalError, match="no such table: notes"):
            await connection.execute(bodies)
        assert len(thread_runs) - before == 1
        await connection.rollback()
        assert (await connection.execute(text("SELECT 2"))).scalar_one() == 2


async def test_a_database_that_is_not_wal_keeps_every_read_in_the_thread(
    thread_runs: list[Callable[[], Any]],
) -> None:
    """An in-memory database (journal mode "memory"): only WAL readers never wait for a writer,
    and a wait here would hold the event loop."""
    memory = make_engine("sqlite+aiosqlite://")
    try:
        async with memory.connect() as connection:
            await connection.run_sync(NOTES.metadata.create_all)
            await connection.execute(insert(NOTES).values(body="kept"))
            bodies = select(NOTES.c.body)
            assert await _trips(thread_runs, connection, bodies) == (1, [("kept",)])
            assert await _trips(thread_runs, connection, bodies) == (1, [("kept",)])
    finally:
        await memory.dispose()
