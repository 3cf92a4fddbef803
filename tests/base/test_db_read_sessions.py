"""A SQLite session that only read closes without a rollback sent to aiosqlite's thread (a hop of
~1 ms under load on every catalog call, for a rollback SQLite would not do), and a session that
wrote is still rolled back: no write transaction is left open and nothing leaks to the next
session on the same pooled connection."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
import pytest_asyncio
from campus_mcp.base.db import make_engine, make_sessions
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine


@pytest.fixture
def rollbacks_sent(engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the rollbacks that reach aiosqlite on this test's engine (the real rollback still
    runs). Only its own: the session's event loop may run other tests' background writers."""
    sent: list[int] = []
    ours: set[int] = set()
    real = aiosqlite.Connection.rollback

    @event.listens_for(engine.sync_engine, "checkout")
    def _checked_out(_dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        ours.add(id(record.driver_connection))

    async def counted(self: aiosqlite.Connection) -> None:
        if id(self) in ours:
            sent.append(1)
        await real(self)

    monkeypatch.setattr(aiosqlite.Connection, "rollback", counted)
    return sent


@pytest_asyncio.fixture
async def engine(tmp_path: Path, both_ways: bool) -> AsyncIterator[AsyncEngine]:
    made = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", pool_size=1, max_overflow=0)
    async with made.begin() as connection:
        await connection.execute(text("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"))
        await connection.execute(text("INSERT INTO notes (body) VALUES ('kept')"))
    yield made
    await made.dispose()


def _bodies_seen_by_another_process(url: Any) -> list[str]:
    # A connection of its own that will not wait: a write lock left open fails it at once.
    other = sqlite3.connect(str(url.database), timeout=0)
    try:
        other.execute("INSERT INTO notes (body) VALUES ('other')")
        other.commit()
        return [row[0] for row in other.execute("SELECT body FROM notes ORDER BY id")]
    finally:
        other.close()


async def test_a_session_that_only_read_sends_no_rollback(
    engine: AsyncEngine, rollbacks_sent: list[int], both_ways: bool
) -> None:
    sessions = make_sessions(engine)
    for _ in range(5):
        async with sessions() as session:
            assert (await session.execute(text("SELECT body FROM notes"))).scalars().all() == ["kept"]
    # Off (the plain path, SQLAlchemy's own adapter): every close sends its rollbacks.
    assert (rollbacks_sent == []) is both_ways


async def test_a_session_that_wrote_is_rolled_back(engine: AsyncEngine, rollbacks_sent: list[int]) -> None:
    sessions = make_sessions(engine)
    async with sessions() as session:
        await session.execute(text("INSERT INTO notes (body) VALUES ('never committed')"))
    assert rollbacks_sent, "the write was rolled back"
    # The next session has the same pooled connection (pool_size=1) and sees only what was committed.
    async with sessions() as session:
        assert (await session.execute(text("SELECT body FROM notes"))).scalars().all() == ["kept"]
    assert _bodies_seen_by_another_process(engine.url) == ["kept", "other"]


async def test_an_explicit_transaction_that_only_read_is_ended(engine: AsyncEngine, rollbacks_sent: list[int]) -> None:
    """BEGIN IMMEDIATE takes the write lock before any write: closing must release it."""
    sessions = make_sessions(engine)
    async with sessions() as session:
        connection = await session.connection()
        await connection.exec_driver_sql("BEGIN IMMEDIATE")
        await session.execute(text("SELECT count(*) FROM notes"))
    assert rollbacks_sent
    assert _bodies_seen_by_another_process(engine.url) == ["kept", "other"]


async def test_a_failed_write_leaves_nothing_open(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    with pytest.raises(Exception, match="UNIQUE"):
        async with sessions() as session:
            await session.execute(text("INSERT INTO notes (body) VALUES ('half')"))
            await session.execute(text("INSERT INTO notes (id, body) VALUES (1, 'duplicate')"))
    async with sessions() as session:
        assert (await session.execute(text("SELECT body FROM notes"))).scalars().all() == ["kept"]
    assert _bodies_seen_by_another_process(engine.url) == ["kept", "other"]


async def test_a_write_cancelled_before_it_ran_leaves_no_lock(engine: AsyncEngine, both_ways: bool) -> None:
    """A call cancelled while its write waits for aiosqlite's thread (an MCP client's
    notifications/cancelled, a server stopping) leaves no transaction open on a pooled connection:
    every other writer of the campus would wait on it, then fail "database is locked". The thread
    is held by a slow statement, the write queued behind it and the call cancelled while SQLite
    still reports no transaction (the rollback skip must not be fooled: SQLAlchemy discards a
    connection whose statement was cancelled, and the write's transaction goes with it)."""
    sessions = make_sessions(engine)
    release = threading.Event()

    def slow() -> int:
        release.wait(5)
        return 1

    async with sessions() as session:
        raw = await (await session.connection()).get_raw_connection()
        driver: aiosqlite.Connection = raw.driver_connection  # type: ignore[assignment]
        await driver.create_function("held_here", 0, slow)
    async with sessions() as session:
        raw = await (await session.connection()).get_raw_connection()
        driver = raw.driver_connection  # type: ignore[assignment]
        holding = asyncio.create_task(driver.execute_fetchall("SELECT held_here()"))
        await asyncio.sleep(0.05)
        write = asyncio.create_task(session.execute(text("INSERT INTO notes (body) VALUES ('cancelled')")))
        await asyncio.sleep(0.05)
        write.cancel()
        await asyncio.sleep(0.05)
        release.set()
        with contextlib.suppress(asyncio.CancelledError):
            await write
    await holding
    assert _bodies_seen_by_another_process(engine.url) == ["kept", "other"]
