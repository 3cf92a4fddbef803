"""PostgreSQL: a pooled connection is pinged at checkout only after it sat idle (db.PING_AFTER_IDLE_S),
not on every catalog call (asyncpg's ping is three round trips of a call's six), and a connection
the database dropped while idle is still replaced without the caller seeing an error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from campus_mcp.base import db
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.testing import TestDatabases
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


@pytest_asyncio.fixture
async def engine(campus_databases: TestDatabases, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AsyncEngine]:
    if not campus_databases.postgres:
        pytest.skip("PostgreSQL only (SQLite has no connection to lose): set CAMPUS_MCP_TEST_DATABASE_URL")
    monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 0.2)
    made = make_engine(await campus_databases.empty(), pool_size=1, max_overflow=0)
    yield made
    await made.dispose()


@pytest.fixture
def pings(engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pings sent (each still sent: the dialect's own ping runs)."""
    sent: list[int] = []
    dialect = engine.sync_engine.dialect
    real = dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        sent.append(1)
        return real(dbapi_connection)

    monkeypatch.setattr(dialect, "do_ping", counted)
    return sent


async def _backend(engine: AsyncEngine) -> int:
    async with make_sessions(engine)() as session:
        return int((await session.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def test_calls_in_a_row_send_no_ping(engine: AsyncEngine, pings: list[int]) -> None:
    backends = {await _backend(engine) for _ in range(5)}
    assert len(backends) == 1, "one pooled connection, reused"
    assert pings == []


async def test_an_idle_connection_is_pinged_and_one_the_database_dropped_is_replaced(
    engine: AsyncEngine, pings: list[int], campus_databases: TestDatabases
) -> None:
    first = await _backend(engine)
    await asyncio.sleep(0.3)
    assert await _backend(engine) == first and pings == [1], "idle: pinged, still answering, kept"
    # The server ends that connection (a restart, an idle timeout) while it sits in the pool.
    other = make_engine(engine.url.render_as_string(hide_password=False))
    try:
        async with other.connect() as connection:
            await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
    finally:
        await other.dispose()
    await asyncio.sleep(0.3)
    replaced = await _backend(engine)
    assert replaced != first and len(pings) == 2, "the failed ping replaced the connection; no error reached the caller"
