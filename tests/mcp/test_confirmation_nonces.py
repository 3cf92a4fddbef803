"""The one-time values of answered confirmations go in a job, not in the answer (issue 36).

An answered ``requestState`` (and a used confirmation code) leaves its nonce in
``answered_request_states`` so it cannot be used twice; each answer used to delete the old
nonces too, a statement in every confirmed change. The job ``core.answered_confirmations``
deletes them every ten minutes: a nonce older than twice a state's life goes (a state that old
is refused by its own expiry), a younger one stays and still refuses its replay.
"""

from __future__ import annotations

from datetime import timedelta

from campus_mcp.base.db import utcnow
from campus_mcp.mcp.answered_states import PRUNE_JOB_ID, AnsweredRequestState
from campus_mcp.mcp.confirmation_state import invalid_state, mark_answered
from campus_mcp.plugin.confirmation import REQUEST_STATE_TTL_SECONDS
from campus_mcp.testing import CampusFactory
from mcp.shared.exceptions import MCPError
from sqlalchemy import select


async def test_the_job_deletes_the_nonces_past_their_use_and_keeps_the_others(campus_factory: CampusFactory) -> None:
    campus = await campus_factory()
    life = timedelta(seconds=REQUEST_STATE_TTL_SECONDS)
    async with campus.sessions() as session:
        session.add(AnsweredRequestState(nonce="old", answered_at=utcnow() - 2 * life - timedelta(minutes=1)))
        session.add(AnsweredRequestState(nonce="young", answered_at=utcnow() - life))
        await session.commit()
    await mark_answered(campus.sessions, "now")

    run = await campus.run_job(PRUNE_JOB_ID)

    assert run.outcome == "ok", run
    assert run.items == 1
    async with campus.sessions() as session:
        left = set((await session.scalars(select(AnsweredRequestState.nonce))).all())
    assert left == {"young", "now"}
    # A nonce the job kept still refuses its second use.
    try:
        await mark_answered(campus.sessions, "young")
    except MCPError as refused:
        assert refused.error.message == invalid_state().error.message
    else:
        raise AssertionError("a kept nonce was accepted twice")
