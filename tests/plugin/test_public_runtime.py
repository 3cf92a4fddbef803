"""The runtime names a plugin uses from ``campus_mcp`` do what docs/plugin-authoring.md says
(issue 10, point 1): a job opens sessions with ``JobContext.session()`` like a tool, a plugin
records work done outside the scheduler with ``record_run``, a plugin command opens the
database with ``open_deployment``, and a plugin route gets the ``deployment`` dependency."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from campus_mcp import (
    Deployment,
    Interval,
    Job,
    JobContext,
    JobOutcome,
    PluginError,
    PluginInfo,
    PluginSettings,
    RouteGroup,
    hookimpl,
    last_success,
    open_deployment,
    record_run,
    utcnow,
)
from campus_mcp.testing import CampusFactory
from campus_mcp.testing import test_settings as settings_for
from litestar import get
from sqlalchemy import text


@get("/api/v1/chores/where", opt={"exclude_from_parity": True})
async def where(deployment: Deployment) -> dict[str, object]:
    return {"plugins": sorted(deployment.registry.plugins), "timezone": deployment.settings.timezone}


class Chores:
    """A plugin with one job that also records a run of side work it did, and one route."""

    def __init__(self) -> None:
        self.seen_tables: list[str] = []

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="chores", version="1", title="Chores", description="Test jobs.")

    @hookimpl
    def register_jobs(self) -> list[Job]:
        async def sweep(context: JobContext) -> JobOutcome:
            async with context.session() as session:
                one = await session.scalar(text("SELECT 1"))
                # Work the job did on the side, recorded under an id of its own.
                await record_run(
                    session,
                    job_id="chores.side_sweep",
                    plugin="chores",
                    started_at=utcnow() - timedelta(minutes=1),
                    outcome=JobOutcome(items=2, lost={"room 101": "locked"}, summary="2 rooms swept"),
                )
                await session.commit()
            return JobOutcome(items=int(one or 0), summary="swept")

        return [Job(id="chores.sweep", description="Sweeps.", trigger=Interval(minutes=60), run=sweep)]

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        return [RouteGroup(handlers=(where,))]


async def test_a_job_opens_sessions_and_records_side_work(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", Chores())])
    run = await campus.run_job("chores.sweep")
    assert (run.outcome, run.items, run.summary, run.error) == ("ok", 1, "swept", None)
    [side] = await campus.job_runs("chores.side_sweep")
    assert (side.plugin, side.outcome, side.items, side.summary) == ("chores", "partial", 2, "2 rooms swept")
    assert side.lost == {"room 101": "locked"}
    assert side.finished_at is not None and side.finished_at > side.started_at
    async with campus.deployment.session() as session:
        # Partial: not a success the advisory may report.
        assert await last_success(session, "chores.side_sweep") is None
        assert await last_success(session, "chores.sweep") == run.finished_at


async def test_a_failed_run_is_recorded_with_its_error(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[])
    async with campus.deployment.session() as session:
        await record_run(
            session,
            job_id="catalog.import.finals",
            plugin="catalog",
            started_at=utcnow(),
            error="SourceError: the registrar's PDF could not be read",
        )
        await session.commit()
    [run] = await campus.job_runs("catalog.import.finals")
    assert (run.outcome, run.items, run.error) == ("failed", 0, "SourceError: the registrar's PDF could not be read")


async def test_a_plugin_route_gets_the_deployment(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("chores", Chores())])
    assert campus.deployment.registry is campus.registry
    async with campus.rest() as client:
        answer = await client.get("/api/v1/chores/where")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"plugins": ["chores", "core"], "timezone": campus.settings.timezone}


async def test_open_deployment_migrates_and_gives_sessions(tmp_path: Path) -> None:
    settings = settings_for(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", plugins=[])
    async with open_deployment(settings) as deployment:
        assert deployment.mcp is None and deployment.endpoint is None
        assert deployment.settings is settings
        async with deployment.session() as session:
            # The host's tables are there: the deployment was migrated first.
            assert await session.scalar(text("SELECT count(*) FROM job_runs")) == 0
            await record_run(session, job_id="catalog.import.banner", plugin="catalog", started_at=utcnow())
            await session.commit()
    async with open_deployment(settings, migrate=False) as again, again.session() as session:
        assert await session.scalar(text("SELECT outcome FROM job_runs")) == "ok"


async def test_open_deployment_names_a_plugin_that_is_not_installed(tmp_path: Path) -> None:
    settings = settings_for(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", plugins=["catalgo"])
    with pytest.raises(PluginError, match="catalgo"):
        async with open_deployment(settings):
            pass


async def test_a_job_and_the_deployment_give_the_plugin_its_settings(campus_factory: CampusFactory) -> None:
    seen: list[object] = []

    class BroomSettings(PluginSettings):
        rooms: int = 3

    class Brooms:
        @hookimpl
        def campus_plugin_info(self) -> PluginInfo:
            return PluginInfo(
                name="brooms", version="1", title="Brooms", description="Test.", settings_model=BroomSettings
            )

        @hookimpl
        def register_jobs(self) -> list[Job]:
            async def count(context: JobContext) -> JobOutcome:
                seen.append(context.plugin_settings)
                return JobOutcome(items=context.plugin_settings.rooms)

            return [Job(id="brooms.count", description="Counts.", trigger=Interval(minutes=60), run=count)]

    campus = await campus_factory(plugins=[], extra_plugins=[("brooms", Brooms())])
    own = campus.deployment.plugin_settings("brooms")
    assert isinstance(own, BroomSettings) and own.rooms == 3
    assert (await campus.run_job("brooms.count")).items == 3
    assert seen == [own]
    assert campus.deployment.plugin_settings("core") is None
