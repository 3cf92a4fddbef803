"""Scheduled jobs: APScheduler runs what plugins contribute, and every run is recorded.

A job that raises is recorded as ``failed`` with its error text and never stops the scheduler,
another job or the server. A job that stored some items but lost others is ``partial``, with
each lost item's id and reason, so ``campus-mcp jobs list`` shows what a run dropped.

A run in progress names its process in its summary (``running: scheduler on HOST pid N``). A
process killed mid-run leaves that row at ``running``; the next scheduler elected (any machine: it
holds the lock, so the old one is gone) and any process on the same machine that finds the pid dead
record it as ``failed`` with the reason (``record_abandoned_runs``). The owner lives in the summary
rather than a column of its own so that this needs no schema change; the summary is replaced by the
job's own when the run ends.

Only one process runs the scheduler at a time (``campus_mcp.leader``); ``scheduler_election``
wires the election to the scheduler.
"""

from __future__ import annotations

import logging
import os
import re
import socket
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

from campus_mcp import metrics
from campus_mcp.contributions import Cron, Interval, Job, JobOutcome
from campus_mcp.db import Base, UTCDateTime, utcnow
from campus_mcp.job_context import JobContext
from campus_mcp.leader import Election, scheduler_lock
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


# "scheduler": a run the elected scheduler started; "command": `campus-mcp jobs run` and other callers.
_OWNER = re.compile(r"^running: (?P<kind>scheduler|command) on (?P<host>\S+) pid (?P<pid>\d+)$")


def run_owner(kind: str = "command") -> str:
    """The summary of a run while it runs: who runs it, so a dead owner's run can be found."""
    return f"running: {kind} on {socket.gethostname()} pid {os.getpid()}"


async def run_job(
    job: Job, registry: Registry, sessions: async_sessionmaker[AsyncSession], *, kind: str = "command"
) -> JobRun:
    """Run one job now and record the run. Never raises for the job's own failure."""
    async with sessions() as session:
        run = JobRun(job_id=job.id, plugin=job.plugin, started_at=utcnow(), outcome="running", summary=run_owner(kind))
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
        log.exception("job %s failed", job.id)
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
        metrics.count_job_run(job.id, stored.outcome, stored.started_at, stored.finished_at)
        # One line per run in the server's log, as a tool call has (campus_mcp.call_log).
        log.info("job %s: %s, %d item(s)", job.id, stored.outcome, stored.items, extra={"outcome": stored.outcome})
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


async def record_abandoned_runs(session: AsyncSession, *, as_scheduler: bool) -> list[JobRun]:
    """Record as failed, with the reason, the runs left at ``running`` by a process that is gone.

    ``as_scheduler``: the caller holds the scheduler lock, so every other scheduler's run still
    ``running`` was left by a dead (or cut off) scheduler, on whatever machine. Any caller also
    recognises a run of this machine whose process no longer exists. Commits what it changed.
    """
    host, me = socket.gethostname(), os.getpid()
    found: list[JobRun] = []
    for run in (await session.execute(select(JobRun).where(JobRun.outcome == "running"))).scalars():
        owner = _OWNER.match(run.summary or "")
        if owner is None:
            continue  # a run recorded before owners were: nothing says whose it is
        pid, same_host = int(owner["pid"]), owner["host"] == host
        mine = same_host and pid == me
        gone = (as_scheduler and owner["kind"] == "scheduler" and not mine) or (same_host and not _alive(pid))
        if mine or not gone:
            continue
        run.outcome = "failed"
        run.finished_at = utcnow()
        run.error = (
            f"abandoned: its process ({owner['kind']} on {owner['host']} pid {pid}) stopped before the run "
            "finished (killed, or cut off from the database); what it had not committed was not kept, "
            "and the next run does the work again"
        )
        run.summary = "abandoned"
        found.append(run)
    if found:
        await session.commit()
        for run in found:
            log.warning("job %s: run %s recorded as abandoned (%s)", run.job_id, run.id, run.error)
            metrics.count_job_run(run.job_id, "abandoned")
    return found


def build_scheduler(registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> AsyncIOScheduler:
    scheduler = AsyncIOScheduler(timezone=registry.settings.timezone)
    for job in registry.jobs.values():
        scheduler.add_job(
            run_job,
            trigger=trigger_for(job, registry.settings.timezone),
            args=[job, registry, sessions],
            kwargs={"kind": "scheduler"},
            id=job.id,
            name=job.description,
            # One run at a time; a run missed while the machine slept is run once, late.
            max_instances=1,
            coalesce=True,
            misfire_grace_time=3600,
        )
    return scheduler


def scheduler_election(registry: Registry, sessions: async_sessionmaker[AsyncSession], *, name: str) -> Election:
    """The election that runs this process's scheduler while it holds the scheduler lock."""
    settings = registry.settings
    running: list[AsyncIOScheduler] = []

    async def lead() -> None:
        async with sessions() as session:
            await record_abandoned_runs(session, as_scheduler=True)
        scheduler = build_scheduler(registry, sessions)
        scheduler.start()
        running.append(scheduler)

    async def step_down() -> None:
        while running:
            # wait=False: a run in progress is cut off with the process; the next scheduler
            # records it as abandoned.
            running.pop().shutdown(wait=False)

    return Election(
        scheduler_lock(settings.database_url, settings.database_timeout_seconds),
        lead=lead,
        step_down=step_down,
        retry_seconds=settings.scheduler_retry_seconds,
        name=name,
    )


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
