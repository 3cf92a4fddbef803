"""Caching as a declaration (issue 25, point 4): ``Operation(cache=AnswerCache(...))`` keeps a public
answer per operation, arguments, database and what ``depends_on`` reads; ``run`` reads in the
session ``depends_on`` read in; 0 entries turns it off; a write cannot be cached."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import pytest_asyncio
from campus_mcp import AnswerCache, Operation, Settings, ToolContext
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.plugin.principal import ANONYMOUS
from campus_mcp.testing import TestDatabases
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession


class Hall(BaseModel):
    name: str = "north"


class Hours(BaseModel):
    hall: str
    computed: int
    same_session: bool


@pytest_asyncio.fixture
async def engine(campus_databases: TestDatabases) -> AsyncIterator[AsyncEngine]:
    made = make_engine(await campus_databases.empty())
    yield made
    await made.dispose()


def _context(engine: AsyncEngine, **settings: Any) -> ToolContext:
    return ToolContext(
        principal=ANONYMOUS,
        settings=Settings(database_url=engine.url.render_as_string(hide_password=False), **settings),
        sessions=make_sessions(engine),
    )


def _hours_operation(version: list[int], runs: list[int], entries: int = 8) -> Operation:
    read_in: list[AsyncSession] = []

    async def depends_on(context: ToolContext, session: AsyncSession) -> tuple[object, ...]:
        read_in.append(session)
        await session.execute(text("SELECT 1"))
        return (version[0],)

    async def run(context: ToolContext, args: Hall) -> Hours:
        runs.append(1)
        async with context.session(read_only=True) as session:
            shared = bool(read_in) and session is read_in[-1]
        return Hours(hall=args.name, computed=len(runs), same_session=shared)

    return Operation(
        name="dining_hours",
        title="Dining hours",
        description="The hours of a dining hall.",
        scope="dining",
        input_model=Hall,
        output_model=Hours,
        run=run,
        path="/api/v1/dining/hours",
        cache=AnswerCache(depends_on=depends_on, entries=lambda _plugin_settings: entries),
    )


async def test_a_cached_operation_runs_once_per_key_and_again_when_its_data_moves(engine: AsyncEngine) -> None:
    version, runs = [1], []
    operation = _hours_operation(version, runs)
    context = _context(engine)
    first = await operation.call(context, Hall())
    assert first == Hours(hall="north", computed=1, same_session=True)
    assert await operation.call(context, Hall()) == first  # kept: run did not run again
    assert (await operation.call(context, Hall(name="south"))).computed == 2  # other arguments
    version[0] = 2
    assert await operation.call(context, Hall()) == Hours(hall="north", computed=3, same_session=True)
    assert len(runs) == 3


async def test_zero_entries_turns_the_cache_off(engine: AsyncEngine) -> None:
    runs: list[int] = []
    operation = _hours_operation([1], runs, entries=0)
    context = _context(engine)
    answers = [await operation.call(context, Hall()) for _ in range(2)]
    assert [answer.computed for answer in answers] == [1, 2]
    assert not answers[0].same_session  # no cache: run opened its own session


def test_a_write_cannot_be_cached() -> None:
    async def depends_on(context: ToolContext, session: AsyncSession) -> tuple[object, ...]:
        return ()

    async def plan(context: ToolContext, args: Any) -> None:
        return None

    with pytest.raises(ValueError, match="writes, so its answer cannot be cached"):
        Operation(
            name="set_hours",
            title="Set hours",
            description="Sets the hours.",
            scope="dining",
            input_model=Hall,
            output_model=Hours,
            run=cast(Any, None),
            path="/api/v1/dining/hours",
            writes=True,
            plan=plan,
            cache=AnswerCache(depends_on=depends_on),
        )
