"""A plugin records a run of work it did outside the scheduler, beside the scheduled runs.

The catalog's on-demand section refresh and its command-line imports are such work: recorded
here, ``campus-mcp jobs list`` shows what they stored and what they lost, without the plugin
knowing the host's table.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.base import metrics
from campus_mcp.base.db import utcnow
from campus_mcp.jobs.scheduler import JobRun
from campus_mcp.plugin.job_context import JobOutcome


async def record_run(
    session: AsyncSession,
    *,
    job_id: str,
    plugin: str,
    started_at: datetime,
    finished_at: datetime | None = None,
    outcome: JobOutcome | None = None,
    error: str | None = None,
) -> None:
    """Add the record of one finished run to ``session``; it is saved when the session commits.

    The run is ``failed`` with ``error`` (a readable line, never a traceback or a secret),
    ``partial`` when ``outcome.lost`` names something, else ``ok``. ``finished_at`` defaults to now.
    """
    outcome = outcome or JobOutcome()
    finished_at = finished_at or utcnow()
    result = "failed" if error else ("partial" if outcome.lost else "ok")
    session.add(
        JobRun(
            job_id=job_id,
            plugin=plugin,
            started_at=started_at,
            finished_at=finished_at,
            outcome=result,
            items=outcome.items,
            lost=dict(outcome.lost),
            summary=outcome.summary,
            error=error,
        )
    )
    # Flushed now so that a bad value fails here, at the caller's line, not at its commit.
    await session.flush()
    metrics.count_job_run(job_id, result, started_at, finished_at)
