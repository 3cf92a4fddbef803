"""Sessions for reading only (``campus_mcp.base.read_sessions``, ``ToolContext.session(read_only=True)``): no
transaction, so on PostgreSQL no BEGIN and no ROLLBACK around a catalog read (three round trips
became one); a write attempted in one fails before it reaches the database and changes nothing;
and the pooled connection it used goes back to the next session with its transactions intact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from campus_mcp import Settings
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.base.read_sessions import WriteInReadSession, read_sessions
from campus_mcp.plugin.principal import ANONYMOUS
from campus_mcp.plugin.tool_context import ToolContext
from campus_mcp.testing import TestDatabases
from sqlalchemy import MetaData, String, delete, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class _Base(DeclarativeBase):
    metadata = MetaData()


class Note(_Base):
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column(String(40))


_metadata = _Base.metadata
notes = Note.__table__


@pytest_asyncio.fixture
async def engine(campus_databases: TestDatabases) -> AsyncIterator[AsyncEngine]:
    # One pooled connection: every session below reuses the one the previous session used.
    made = make_engine(await campus_databases.empty(), pool_size=1, max_overflow=0)
    async with made.begin() as connection:
        await connection.run_sync(_metadata.create_all)
        await connection.execute(insert(notes).values(body="kept"))
    yield made
    await made.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessions(engine)


@pytest.fixture
def simple_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The simple queries asyncpg sends (its BEGIN, COMMIT, ROLLBACK; the real ones still run)."""
    sent: list[str] = []
    real = asyncpg.connection.Connection.execute

    async def counted(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(query.split()[0].rstrip(";").upper())
        return await real(self, query, *args, **kwargs)

    monkeypatch.setattr(asyncpg.connection.Connection, "execute", counted)
    return sent


async def _bodies(sessions: async_sessionmaker[AsyncSession]) -> list[str]:
    async with sessions() as session:
        return list((await session.scalars(select(notes.c.body).order_by(notes.c.id))).all())


async def test_a_read_session_sends_no_begin_and_no_rollback(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], simple_queries: list[str]
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's round trips (SQLite's rollback: tests/base/test_db_read_sessions.py)")
    async with sessions() as session:
        assert (await session.scalars(select(notes.c.body))).all() == ["kept"]
    assert simple_queries == ["BEGIN", "ROLLBACK"], "the ordinary session is a transaction"
    simple_queries.clear()
    for _ in range(3):
        async with read_sessions(sessions)() as session:
            assert (await session.scalars(select(notes.c.body))).all() == ["kept"]
            assert (await session.scalar(select(func.count()).select_from(notes))) == 1
    assert simple_queries == []


async def test_each_statement_of_a_read_session_is_its_own_transaction(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]
) -> None:
    """What a read gives up (and why that is fine at READ COMMITTED: campus_mcp.base.read_sessions): two of its
    statements are two transactions. In the ordinary session they are one."""
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL: now() is the start of the transaction")
    moment = text("SELECT now()")

    async def two_moments(made: async_sessionmaker[AsyncSession]) -> tuple[Any, Any]:
        async with made() as session:
            first = await session.scalar(moment)
            await asyncio.sleep(0.01)
            return first, await session.scalar(moment)

    first, second = await two_moments(read_sessions(sessions))
    assert second > first
    first, second = await two_moments(sessions)
    assert second == first, "the read session left its connection in autocommit"


async def test_a_read_session_streams_on_every_database_and_gives_its_connection_back_clean(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], simple_queries: list[str]
) -> None:
    """``session.stream`` (the catalog's ranking by meaning) in a read session: on PostgreSQL its
    server-side cursor needs a transaction, which the session begins READ ONLY at the first stream
    and rolls back when it lets go of its connection; the next session on that one pooled
    connection is an ordinary transaction again (a leaked read-only one would refuse its write)."""
    async with sessions() as session:
        await session.execute(insert(notes), [{"body": f"note {n}"} for n in range(1, 6)])
        await session.commit()
    simple_queries.clear()
    expected = ["kept", *(f"note {n}" for n in range(1, 6))]
    streamed = select(notes.c.body).order_by(notes.c.id).execution_options(yield_per=2)
    async with read_sessions(sessions)() as session:
        assert (await session.scalar(select(func.count()).select_from(notes))) == 6
        assert simple_queries == [], "a read that does not stream begins nothing"
        result = await session.stream(streamed)
        assert [row.body async for row in result] == expected
        # A second stream, then one after a rollback in the middle of the session.
        assert [body async for body in await session.stream_scalars(streamed)] == expected
        await session.rollback()
        assert [row.body async for row in await session.stream(streamed)] == expected
    if engine.dialect.name == "postgresql":
        assert simple_queries == ["BEGIN", "ROLLBACK", "BEGIN", "ROLLBACK"]
    async with sessions() as session:
        await session.execute(insert(notes).values(body="never committed"))
        await session.rollback()
    async with sessions() as session:
        await session.execute(insert(notes).values(body="committed"))
        await session.commit()
    assert await _bodies(sessions) == [*expected, "committed"]


_WRITES: dict[str, Any] = {
    "an ORM insert": lambda session: _flush_new_note(session),
    "a Core insert": lambda session: session.execute(insert(notes).values(body="written")),
    "a Core update": lambda session: session.execute(update(notes).values(body="written")),
    "an UPDATE in words": lambda session: session.execute(text("UPDATE notes SET body = 'written'")),
    "a DELETE in words": lambda session: session.execute(text("DELETE FROM notes")),
    "a driver INSERT": lambda session: _driver_sql(session, "INSERT INTO notes (body) VALUES ('written')"),
    "a data-modifying WITH": lambda session: session.execute(
        text("WITH gone AS (DELETE FROM notes RETURNING id) SELECT count(*) FROM gone")
    ),
    "a Core data-modifying WITH": lambda session: session.execute(
        select(func.count()).select_from(delete(notes).returning(notes.c.id).cte("gone"))
    ),
    "a row lock": lambda session: session.execute(select(notes.c.body).with_for_update()),
    "a row lock in words": lambda session: session.execute(text("SELECT body FROM notes FOR UPDATE")),
    "a new table": lambda session: _driver_sql(session, "CREATE TABLE other_notes (id INTEGER)"),
}


async def _flush_new_note(session: AsyncSession) -> None:
    session.add(Note(body="written"))
    await session.flush()


async def _driver_sql(session: AsyncSession, statement: str) -> None:
    connection = await session.connection()
    await connection.exec_driver_sql(statement)


@pytest.mark.parametrize("write", list(_WRITES))
async def test_a_write_in_a_read_session_fails_and_changes_nothing(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], write: str
) -> None:
    if write == "a row lock" and engine.dialect.name == "sqlite":
        pytest.skip("SQLite has no row locks: SQLAlchemy writes no FOR UPDATE for it")
    async with read_sessions(sessions)() as session:
        with pytest.raises(WriteInReadSession, match="reading only"):
            await _WRITES[write](session)
        # In autocommit, a write that reached the database would be kept whatever comes next.
        await session.rollback()
    assert await _bodies(sessions) == ["kept"]
    async with engine.connect() as connection:
        tables = await connection.run_sync(lambda sync: sync.dialect.get_table_names(sync))
    assert "other_notes" not in tables


async def test_a_write_after_a_read_session_is_rolled_back_on_the_same_connection(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """The connection a read session used goes back to the pool in transactions: a write that
    is not committed is not kept (in autocommit it would have been, at once)."""
    async with read_sessions(sessions)() as session:
        assert (await session.scalars(select(notes.c.body))).all() == ["kept"]
    async with sessions() as session:
        await session.execute(insert(notes).values(body="never committed"))
        await session.rollback()
    async with sessions() as session:
        await session.execute(update(notes).values(body="not committed either"))
    assert await _bodies(sessions) == ["kept"]
    async with sessions() as session:
        await session.execute(insert(notes).values(body="committed"))
        await session.commit()
    assert await _bodies(read_sessions(sessions)) == ["kept", "committed"]


async def test_a_tool_context_gives_a_read_session_only_when_asked(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession]
) -> None:
    context = ToolContext(
        principal=ANONYMOUS,
        settings=Settings(database_url=engine.url.render_as_string(hide_password=False)),
        sessions=sessions,
    )
    async with context.session(read_only=True) as session:
        assert (await session.scalars(select(notes.c.body))).all() == ["kept"]
        with pytest.raises(WriteInReadSession):
            await session.execute(insert(notes).values(body="written"))
    async with context.session() as session:
        await session.execute(insert(notes).values(body="written"))
        await session.commit()
    assert await _bodies(sessions) == ["kept", "written"]
    assert read_sessions(sessions) is read_sessions(sessions), "one read sessionmaker per sessionmaker"
