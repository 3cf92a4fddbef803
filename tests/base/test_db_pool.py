"""A server process keeps ``database_pool_size`` connections (10) and reuses them, so requests at
once up to that many open no connection after the first round. With SQLAlchemy's 5, 8 requests at
once opened and closed 3 connections every round: on PostgreSQL each a TCP connect, TLS
negotiation and startup, on SQLite each a new aiosqlite thread opening the file (issue 16)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from campus_mcp import Settings
from campus_mcp.base.db import POOL_OVERFLOW, POOL_SIZE, make_engine, make_sessions
from campus_mcp.testing import TestDatabases
from campus_mcp.web.app import create_app
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

AT_ONCE = 8


@pytest_asyncio.fixture
async def url(campus_databases: TestDatabases) -> str:
    return await campus_databases.empty()


@pytest_asyncio.fixture
async def engine(url: str) -> AsyncIterator[AsyncEngine]:
    made = make_engine(url)
    yield made
    await made.dispose()


async def _rounds(engine: AsyncEngine, rounds: int) -> list[set[int]]:
    """The connections (the DBAPI connections' ids) that answered each round of AT_ONCE sessions
    held at once; on PostgreSQL the server processes (backend pids) too, which must match them."""
    sessions = make_sessions(engine)
    postgres = engine.dialect.name == "postgresql"
    seen: list[set[int]] = []

    async def one(everyone_in: asyncio.Barrier) -> int:
        async with sessions() as session:
            connection = await session.connection()
            raw = await connection.get_raw_connection()
            query = "SELECT pg_backend_pid()" if postgres else "SELECT 1"
            answer = int((await session.execute(text(query))).scalar_one())
            await everyone_in.wait()  # every session holds its connection at the same time
            return answer if postgres else id(raw.driver_connection)

    for _ in range(rounds):
        everyone_in = asyncio.Barrier(AT_ONCE)
        seen.append(set(await asyncio.gather(*(one(everyone_in) for _ in range(AT_ONCE)))))
    return seen


async def test_requests_at_once_reuse_the_kept_connections(engine: AsyncEngine) -> None:
    assert (engine.sync_engine.pool.size(), engine.sync_engine.pool._max_overflow) == (POOL_SIZE, POOL_OVERFLOW)  # type: ignore[attr-defined]
    assert POOL_SIZE >= AT_ONCE
    opened: list[int] = []

    @event.listens_for(engine.sync_engine, "connect")
    def _opened(*_args: Any) -> None:
        opened.append(1)

    rounds = await _rounds(engine, 4)
    assert all(len(pids) == AT_ONCE for pids in rounds), rounds
    assert len(opened) == AT_ONCE, "opened in the first round, then reused"
    assert rounds[1:] == [rounds[0]] * 3


async def test_the_settings_size_the_servers_pool(url: str) -> None:
    settings = Settings(database_url=url, database_pool_size=3, database_pool_overflow=1, scheduler=False)
    app = create_app(settings)
    engine = app.state.deployment.engine
    try:
        assert (engine.sync_engine.pool.size(), engine.sync_engine.pool._max_overflow) == (3, 1)
    finally:
        await engine.dispose()
