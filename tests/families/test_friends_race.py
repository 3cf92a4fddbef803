"""Two students who ask each other at the same moment become friends; neither gets a server error.

Both see no row, both insert one, and the unique pair refuses the second insert: the second is
then the same as asking back. PostgreSQL only: there the second insert waits for the first
transaction and fails when it commits (SQLite lets one writer in at a time, so the moment
cannot be set up there)."""

from __future__ import annotations

import asyncio

import pytest
from campus_friends.friendships import send_request
from campus_friends.models import Friendship
from campus_mcp.testing import CampusFactory
from sqlalchemy import select


async def test_asking_each_other_at_once_makes_friends(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    if campus.deployment.engine.dialect.name != "postgresql":
        pytest.skip("the moment needs two writers at once: PostgreSQL (CAMPUS_MCP_TEST_DATABASE_URL)")
    sessions = campus.deployment.sessions
    async with sessions() as first, sessions() as second:
        await first.begin()
        sent = await send_request(first, 4, "student5")  # student4 asks student5, not yet committed
        assert not sent.accepted
        await second.begin()
        # student5 asks student4: it sees no row yet, and its insert waits on the first one's.
        answer = asyncio.create_task(send_request(second, 5, "student4"))
        await asyncio.sleep(0.5)
        assert not answer.done()
        await first.commit()
        outcome = await asyncio.wait_for(answer, 10)
        await second.commit()
    assert outcome.accepted
    async with sessions() as session:
        rows = (
            await session.scalars(
                select(Friendship).where(Friendship.low_student_id == 4, Friendship.high_student_id == 5)
            )
        ).all()
    assert [(row.high_student_id, row.status) for row in rows] == [(5, "accepted")]
