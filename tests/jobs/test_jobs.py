"""Jobs: every run recorded with its outcome; a failing job stops nothing else; triggers in campus time."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from campus_mcp import Cron, Interval, Job, JobOutcome, PluginInfo, hookimpl
from campus_mcp.jobs.scheduler import JobContext, JobRun, build_scheduler, last_success, run_job, trigger_for
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import select


async def crash(_context: JobContext) -> JobOutcome:
    raise ConnectionError("the dining feed answered 503 Service Unavailable")


class Jobs:
    def __init__(self, *jobs: Job) -> None:
        self.jobs = list(jobs)

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="chores", version="1", title="Chores", description="Test jobs.")

    @hookimpl
    def register_jobs(self) -> list[Job]:
        return self.jobs


async def runs_of(campus: CampusHarness, job_id: str) -> list[JobRun]:
    async with campus.sessions() as session:
        return list(
            (await session.execute(select(JobRun).where(JobRun.job_id == job_id).order_by(JobRun.id))).scalars()
        )


async def test_a_failing_job_is_recorded_with_its_error(campus_factory: CampusFactory) -> None:
    job = Job(id="chores.crash", description="Always fails.", trigger=Interval(minutes=60), run=crash)
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", Jobs(job))])
    run = await run_job(campus.registry.jobs["chores.crash"], campus.registry, campus.sessions)
    [stored] = await runs_of(campus, "chores.crash")
    assert stored.id == run.id
    assert stored.outcome == "failed"
    assert stored.error == "ConnectionError: the dining feed answered 503 Service Unavailable"
    assert stored.plugin == "chores"
    assert stored.finished_at is not None and stored.finished_at >= stored.started_at
    assert stored.started_at.tzinfo is not None


async def test_a_failing_job_does_not_stop_the_scheduler_or_other_jobs(campus_factory: CampusFactory) -> None:
    ran = asyncio.Event()

    async def tidy(_context: JobContext) -> JobOutcome:
        ran.set()
        return JobOutcome(items=1, summary="tidied")

    jobs = Jobs(
        Job(id="chores.crash", description="Always fails.", trigger=Interval(minutes=60), run=crash),
        Job(id="chores.tidy", description="Works.", trigger=Interval(minutes=60), run=tidy),
    )
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", jobs)])
    scheduler = build_scheduler(campus.registry, campus.sessions)
    scheduler.start()
    try:
        now = datetime.now(UTC)
        # The failing job is due first, then the good one.
        scheduler.modify_job("chores.crash", next_run_time=now)
        scheduler.modify_job("chores.tidy", next_run_time=now)
        await asyncio.wait_for(ran.wait(), timeout=60)
        for _ in range(600):  # until both runs are recorded (the good job records after it returns)
            if [r.outcome for r in await runs_of(campus, "chores.tidy")] == ["ok"]:
                break
            await asyncio.sleep(0.05)
        assert scheduler.running
        assert [r.outcome for r in await runs_of(campus, "chores.crash")] == ["failed"]
        assert [(r.outcome, r.items, r.summary) for r in await runs_of(campus, "chores.tidy")] == [("ok", 1, "tidied")]
        assert scheduler.get_job("chores.crash") is not None, "the failing job was removed from the schedule"
    finally:
        scheduler.shutdown(wait=False)


async def test_a_partial_run_records_what_it_lost(campus_factory: CampusFactory) -> None:
    async def import_halls(_context: JobContext) -> JobOutcome:
        return JobOutcome(items=2, lost={"food-truck": "hours: closes before it opens"}, summary="2 of 3 halls")

    job = Job(id="chores.import", description="Imports halls.", trigger=Cron(hour="5"), run=import_halls)
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", Jobs(job))])
    run = await run_job(campus.registry.jobs["chores.import"], campus.registry, campus.sessions)
    assert (run.outcome, run.items, run.lost, run.error) == (
        "partial",
        2,
        {"food-truck": "hours: closes before it opens"},
        None,
    )
    async with campus.sessions() as session:
        # A partial run is not a clean refresh: the advisory keeps reporting the last full one.
        assert await last_success(session, "chores.import") is None


async def test_last_success_is_the_latest_clean_run(campus_factory: CampusFactory) -> None:
    outcomes = iter([JobOutcome(items=1), JobOutcome(items=1, lost={"x": "broken"})])

    async def flaky(_context: JobContext) -> JobOutcome:
        return next(outcomes)

    job = Job(id="chores.flaky", description="Flaky.", trigger=Interval(minutes=5), run=flaky)
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", Jobs(job))])
    registered = campus.registry.jobs["chores.flaky"]
    clean = await run_job(registered, campus.registry, campus.sessions)
    partial = await run_job(registered, campus.registry, campus.sessions)
    assert (clean.outcome, partial.outcome) == ("ok", "partial")
    async with campus.sessions() as session:
        assert await last_success(session, "chores.flaky") == clean.finished_at


async def test_a_job_returning_nothing_is_an_ok_run_with_no_items(campus_factory: CampusFactory) -> None:
    async def quiet(_context: JobContext) -> None:
        return None

    job = Job(id="chores.quiet", description="Quiet.", trigger=Interval(minutes=5), run=quiet)
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", Jobs(job))])
    run = await run_job(campus.registry.jobs["chores.quiet"], campus.registry, campus.sessions)
    assert (run.outcome, run.items, run.lost) == ("ok", 0, {})


async def test_triggers_use_the_campus_time_zone(campus_factory: CampusFactory) -> None:
    cron = Job(id="chores.morning", description="05:10 campus time.", trigger=Cron(minute="10", hour="5"), run=crash)
    interval = Job(id="chores.often", description="Every 15 minutes.", trigger=Interval(minutes=15), run=crash)
    campus = await campus_factory(
        plugins=[], extra_plugins=[("chores", Jobs(cron, interval))], timezone="America/Los_Angeles"
    )
    pacific = ZoneInfo("America/Los_Angeles")
    trigger = trigger_for(campus.registry.jobs["chores.morning"], campus.settings.timezone)
    assert str(trigger.timezone) == "America/Los_Angeles"
    fire = trigger.get_next_fire_time(None, datetime(2026, 7, 1, 12, 0, tzinfo=UTC))
    assert fire is not None
    # 05:10 in Los Angeles (PDT, UTC-7) is 12:10 UTC on the same summer day.
    assert (fire.astimezone(pacific).hour, fire.astimezone(pacific).minute) == (5, 10)
    assert fire.astimezone(UTC) == datetime(2026, 7, 1, 12, 10, tzinfo=UTC)
    # And in winter (PST, UTC-8) the same campus time is 13:10 UTC.
    winter = trigger.get_next_fire_time(None, datetime(2026, 12, 1, 14, 0, tzinfo=UTC))
    assert winter is not None and winter.astimezone(UTC) == datetime(2026, 12, 2, 13, 10, tzinfo=UTC)
    assert str(trigger_for(campus.registry.jobs["chores.often"], campus.settings.timezone).timezone) == (
        "America/Los_Angeles"
    )
    scheduler = build_scheduler(campus.registry, campus.sessions)
    assert str(scheduler.timezone) == "America/Los_Angeles"
