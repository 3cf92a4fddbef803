"""SQLite statements make one trip to aiosqlite's thread, not four (host/campus_mcp/sqlite_driver.py),
and the answers are those of SQLAlchemy's stock aiosqlite adapter: rows, row counts, last row ids,
executemany, errors as SQLAlchemy's, a rollback, a streamed result."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiosqlite
import aiosqlite.core
import pytest
import pytest_asyncio
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.base.speedups.sqlite_driver import OneTripDBAPI, one_trip_supported
from sqlalchemy import Column, Integer, MetaData, String, Table, exc, insert, select, text, update
from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_dbapi
from sqlalchemy.ext.asyncio import AsyncEngine

NOTES = Table(
    "notes",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("body", String, nullable=False, unique=True),
)


async def _engine(path: Path, **kwargs: Any) -> AsyncEngine:
    made = make_engine(f"sqlite+aiosqlite:///{path}", pool_size=1, max_overflow=0, **kwargs)
    async with made.begin() as connection:
        await connection.run_sync(NOTES.metadata.create_all)
        await connection.execute(insert(NOTES), [{"body": "kept"}, {"body": "also kept"}])
    return made


@pytest_asyncio.fixture
async def engine(tmp_path: Path, thread_runs: list[Callable[[], Any]], both_ways: bool) -> AsyncIterator[AsyncEngine]:
    made = await _engine(tmp_path / "campus.db")
    yield made
    await made.dispose()


async def _trips_of_a_select(engine: AsyncEngine, thread_runs: list[Callable[[], Any]]) -> tuple[int, list[str]]:
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))  # the pooled connection opened and ready
        before = len(thread_runs)
        bodies = list((await connection.execute(select(NOTES.c.body).order_by(NOTES.c.id))).scalars())
        return len(thread_runs) - before, bodies


def test_the_libraries_still_have_what_the_adapter_uses() -> None:
    """Fails loudly when an upgrade of SQLAlchemy or aiosqlite moved a private part the adapter
    relies on (make_engine then falls back to the stock adapter, four trips a statement)."""
    assert one_trip_supported() == ()


async def test_a_select_is_one_trip_to_the_thread(
    engine: AsyncEngine, tmp_path: Path, thread_runs: list[Callable[[], Any]], both_ways: bool
) -> None:
    # Off (sqlite_one_trip, the plain path): the same rows, four trips.
    assert isinstance(engine.dialect.dbapi, OneTripDBAPI) is both_ways
    assert await _trips_of_a_select(engine, thread_runs) == (1 if both_ways else 4, ["kept", "also kept"])
    # SQLAlchemy's stock adapter: cursor, execute, fetchall, close.
    stock = await _engine(tmp_path / "stock.db", module=AsyncAdapt_aiosqlite_dbapi(aiosqlite, sqlite3))
    try:
        assert await _trips_of_a_select(stock, thread_runs) == (4, ["kept", "also kept"])
    finally:
        await stock.dispose()


async def test_rows_one_by_one_and_an_empty_result(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        result = await connection.execute(select(NOTES.c.id, NOTES.c.body).order_by(NOTES.c.id))
        assert list(result.keys()) == ["id", "body"]
        assert tuple(result.fetchone() or ()) == (1, "kept")
        assert [tuple(row) for row in result.fetchmany(5)] == [(2, "also kept")]
        assert result.fetchone() is None
        empty = await connection.execute(select(NOTES.c.body).where(NOTES.c.body == "absent"))
        assert list(empty.keys()) == ["body"] and empty.all() == []


async def test_writes_report_their_row_ids_and_counts(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        added = await connection.execute(insert(NOTES).values(body="third"))
        assert added.inserted_primary_key == (3,)
        many = await connection.execute(insert(NOTES), [{"body": "fourth"}, {"body": "fifth"}])
        assert many.rowcount == 2
        returned = await connection.execute(insert(NOTES).values(body="sixth").returning(NOTES.c.id))
        assert returned.scalar_one() == 6
        changed = await connection.execute(update(NOTES).where(NOTES.c.id > 4).values(body=NOTES.c.body + "!"))
        assert changed.rowcount == 2
        raw = await connection.exec_driver_sql("UPDATE notes SET body = body || '?' WHERE id = ?", [(1,), (2,)])
        assert raw.rowcount == 2
    async with engine.connect() as connection:
        bodies = (await connection.execute(select(NOTES.c.body).order_by(NOTES.c.id))).scalars().all()
    assert bodies == ["kept?", "also kept?", "third", "fourth", "fifth!", "sixth!"]


async def test_errors_are_sqlalchemys_and_the_connection_goes_on(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    async with sessions() as session:
        with pytest.raises(exc.IntegrityError, match=r"UNIQUE constraint failed: notes\.body"):
            await session.execute(insert(NOTES).values(body="kept"))
        await session.rollback()
        with pytest.raises(exc.OperationalError, match="no such table: absent"):
            await session.execute(text("SELECT * FROM absent"))
        await session.rollback()
        assert (await session.execute(select(NOTES.c.body).where(NOTES.c.id == 1))).scalar_one() == "kept"


async def test_a_rolled_back_transaction_leaves_nothing(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    async with sessions() as session:
        await session.execute(insert(NOTES).values(body="never committed"))
        await session.execute(update(NOTES).values(body=NOTES.c.body + " (changed)"))
        await session.rollback()
        assert (await session.execute(select(NOTES.c.body).order_by(NOTES.c.id))).scalars().all() == [
            "kept",
            "also kept",
        ]


async def test_a_streamed_result_still_comes_in_chunks(engine: AsyncEngine) -> None:
    """session.stream (the catalog's ranking by meaning) keeps SQLAlchemy's server-side cursor."""
    sessions = make_sessions(engine)
    async with sessions() as session:
        result = await session.stream(select(NOTES.c.body).order_by(NOTES.c.id).execution_options(yield_per=1))
        assert [row async for row in result.scalars()] == ["kept", "also kept"]
