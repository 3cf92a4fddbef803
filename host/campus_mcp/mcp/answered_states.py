"""The nonces of answered confirmations (campus_mcp.mcp.confirmation_state), and their prune job.

Apart from the confirmation state because the host registers the job in every process, a command
that serves no MCP too (db upgrade, import, token): the state's module imports the MCP SDK
(~2 s of CPU), this one does not.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import String, delete
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.base.db import Base, UTCDateTime, utcnow
from campus_mcp.mcp import confirmation_page
from campus_mcp.plugin.confirmation import REQUEST_STATE_TTL_SECONDS
from campus_mcp.plugin.job_context import Cron, Job, JobContext, JobOutcome


class AnsweredRequestState(Base):
    __tablename__ = "answered_request_states"

    nonce: Mapped[str] = mapped_column(String(64), primary_key=True)
    answered_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


PRUNE_JOB_ID = "core.answered_confirmations"


async def prune_answered(session: AsyncSession) -> int:
    """Delete the nonces older than twice a state's life (a later state is refused by its expiry,
    whether or not its nonce is still here); the rows deleted."""
    cutoff = utcnow() - timedelta(seconds=REQUEST_STATE_TTL_SECONDS * 2)
    result = await session.execute(delete(AnsweredRequestState).where(AnsweredRequestState.answered_at < cutoff))
    await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


async def _prune(context: JobContext) -> JobOutcome:
    async with context.session() as session:
        deleted = await prune_answered(session)
        pages = await confirmation_page.prune(session)
    return JobOutcome(
        items=deleted + pages,
        summary=f"deleted {deleted} answered confirmation(s) and {pages} confirmation page(s) past their life",
    )


def prune_job() -> Job:
    # Each answer used to delete the old nonces itself: a statement in every confirmed change.
    return Job(
        id=PRUNE_JOB_ID,
        description="Delete the one-time values of answered confirmations once they can no longer be used.",
        trigger=Cron(minute="*/10"),
        run=_prune,
    )
