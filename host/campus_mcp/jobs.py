"""Scheduled jobs: APScheduler runs what plugins contribute, and every run is recorded.

A job that raises is recorded as ``failed`` with its error text and never stops the scheduler,
another job or the server. A job that stored some items but lost others is ``partial``, with
each lost item's id and reason, so ``campus-mcp jobs list`` shows what a run dropped.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Collection
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import JSON, Integer, String, Text, delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.contributions import Cron, Interval, Job, JobOutcome
from campus_mcp.db import Base, UTCDateTime, utcnow
from campus_mcp.job_context import JobContext
from campus_mcp.registry import Registry

log = logging.getLogger(__name__)

# The summary of the runs that demo loads used to make up (the demo campus writes none now): they
# never happened, so they are never listed, and a demo reload removes them (forget_made_up_runs).
DEMO_RUN_SUMMARY = "Demo campus: loaded by the demo generator."


class JobRun(Base):
    __tablename__ = "job_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[str] = mapped_column(String(200), index=True)
    plugin: Mapped[str] = mapped_column(String(100))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # running | ok | partial | failed
    outcome: Mapped[str] = mapped_column(String(20), default="running")
    items: Mapped[int] = mapped_column(Integer, default=0)
    lost: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    summary: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)


def trigger_for(job: Job, timezone: str) -> CronTrigger | IntervalTrigger:
    spec = job.trigger
    if isinstance(spec, Cron):
        return CronTrigger(
            minute=spec.minute,
            hour=spec.hour,
            day=spec.day,
            day_of_week=spec.day_of_week,
            month=spec.month,
            timezone=timezone,
        )
    assert isinstance(spec, Interval)
    return IntervalTrigger(minutes=spec.minutes, timezone=timezone)


async def run_job(job: Job, registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> JobRun:
    """Run one job now and record the run. Never raises for the job's own failure."""
    async with sessions() as session:
        run = JobRun(job_id=job.id, plugin=job.plugin, started_at=utcnow(), outcome="running")
        session.add(run)
        await session.commit()
        run_id = run.id
    context = JobContext(job=job, settings=registry.settings, registry=registry, sessions=sessions, run_id=run_id)
    outcome: JobOutcome | None = None
    error: str | None = None
    try:
        outcome = await job.run(context)
    except Exception as exc:
        # The traceback goes to the server log; the record keeps the readable line.
        log.error("job %s failed:\n%s", job.id, traceback.format_exc())
        error = f"{type(exc).__name__}: {exc}"
    outcome = outcome or JobOutcome()
    async with sessions() as session:
        stored = await session.get(JobRun, run_id)
        assert stored is not None
        stored.finished_at = utcnow()
        stored.items = outcome.items
        stored.lost = dict(outcome.lost)
        stored.summary = outcome.summary
        stored.error = error
        stored.outcome = "failed" if error else ("partial" if outcome.lost else "ok")
        await session.commit()
        return stored


async def last_success(session: AsyncSession, job_id: str) -> datetime | None:
    """When the job last finished without losing anything: the time the advisory reports."""
    return (
        await session.execute(
            select(JobRun.finished_at)
            .where(JobRun.job_id == job_id, JobRun.outcome == "ok")
            .order_by(JobRun.finished_at.desc())
            .limit(1)
        )
    ).scalar_one_or_none()


def build_scheduler(registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> AsyncIOScheduler:
    scheduler = AsyncIOScheduler(timezone=registry.settings.timezone)
    for job in registry.jobs.values():
        scheduler.add_job(
            run_job,
            trigger=trigger_for(job, registry.settings.timezone),
            args=[job, registry, sessions],
            id=job.id,
            name=job.description,
            # One run at a time; a run missed while the machine slept is run once, late.
            max_instances=1,
            coalesce=True,
            misfire_grace_time=3600,
        )
    return scheduler


def _run_row(run: JobRun, zone: ZoneInfo) -> dict[str, Any]:
    def campus_time(moment: datetime | None) -> str | None:
        return moment.astimezone(zone).isoformat(timespec="seconds") if moment else None

    return {
        "job": run.job_id,
        "plugin": run.plugin,
        "started_at": campus_time(run.started_at),
        "finished_at": campus_time(run.finished_at),
        "outcome": run.outcome,
        "items": run.items,
        "lost": run.lost,
        "summary": run.summary,
        "error": run.error,
    }


async def recent_runs(
    session: AsyncSession, job_ids: Collection[str], timezone: str, *, jobs: bool = True, limit: int = 50
) -> list[dict[str, Any]]:
    """The latest recorded runs, newest first, times in the campus zone (ISO 8601, to the second).

    ``jobs=True``: the runs of ``job_ids``, the registered jobs, which ``jobs run`` can start.
    ``jobs=False``: the other records, work done outside the scheduler (a refresh a tool asked
    for, an import from the command line), so that what they lost is still there to read.
    """
    registered = JobRun.job_id.in_(list(job_ids))
    rows = (
        await session.execute(
            select(JobRun)
            .where(registered if jobs else ~registered, JobRun.summary != DEMO_RUN_SUMMARY)
            .order_by(JobRun.started_at.desc(), JobRun.id.desc())
            .limit(limit)
        )
    ).scalars()
    zone = ZoneInfo(timezone)
    return [_run_row(run, zone) for run in rows]


async def forget_made_up_runs(session: AsyncSession) -> None:
    """Remove the runs that earlier demo loads made up (see ``DEMO_RUN_SUMMARY``)."""
    await session.execute(delete(JobRun).where(JobRun.summary == DEMO_RUN_SUMMARY))
