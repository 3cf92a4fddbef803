"""The plugin-author kit: a pytest plugin (entry point ``pytest11``) with Campus MCP fixtures.

Fixtures:

- ``campus_factory``: builds a campus (an app with chosen plugins, a migrated database, the demo
  campus if asked) and closes it after the test. ``await campus_factory(plugins=["catalog"])``;
  ``plugin_settings={"dining": {"feed": ...}}`` sets plugins' settings.
- ``demo_campus``: one campus with every installed plugin and the demo campus, shared by the
  whole test session (read-only tests only: do not change its data).

A :class:`CampusHarness` gives an MCP client bound to the campus with a chosen principal
(``harness.mcp(scopes=..., user_id=...)``), a REST client (``harness.rest()``) and
``harness.call(tool, arguments, ...)`` for one tool call. ``serve(env, log_path=...)`` runs a real
``campus-mcp serve`` subprocess on loopback for an end-to-end test (see :mod:`campus_mcp.testing.serve`).

Each harness has a database of its own: SQLite in a temporary folder, or, when
``CAMPUS_MCP_TEST_DATABASE_URL`` names a PostgreSQL database, a new database created on that
server (the named one is only used to connect; CI runs both). The demo campus is built once per
session into a template and copied, so that tests stay fast.

The async fixtures are pytest-asyncio fixtures, so the kit needs no ``asyncio_mode`` setting: in
pytest-asyncio's default strict mode, mark the tests (``pytestmark = pytest.mark.asyncio`` in the
module); with ``asyncio_mode = "auto"`` nothing needs marking.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from campus_mcp.testing.kit_extra import missing_kit_dependency

try:
    import pytest
    import pytest_asyncio
except ModuleNotFoundError as missing:  # campus-mcp without its testing extra
    raise missing_kit_dependency(missing) from missing
from alembic.config import Config
from argon2 import PasswordHasher
from litestar import Litestar
from mcp import Client
from mcp_types import CallToolResult
from sqlalchemy import make_url, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.assembly.migrate import alembic_config, upgrade
from campus_mcp.assembly.parity import ParityReport, check_parity
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.base.settings import Settings
from campus_mcp.base.speedups import Switches
from campus_mcp.cli.demo import load_demo
from campus_mcp.cli.main import main as cli_main
from campus_mcp.jobs.scheduler import JobRun, run_job
from campus_mcp.mcp.instructions import assemble_instructions
from campus_mcp.oauth import accounts
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.plugin.job_context import Job
from campus_mcp.plugin.principal import ANONYMOUS, Principal, current_principal
from campus_mcp.testing.browser import StudentBrowser
from campus_mcp.testing.oauth import free_port
from campus_mcp.testing.rest import RestClient
from campus_mcp.testing.serve import ServedCampus, private_redis, serve
from campus_mcp.testing.settings import test_settings
from campus_mcp.web.app import create_app

TEST_DATABASE_ENV = "CAMPUS_MCP_TEST_DATABASE_URL"

# The kit's public names (api.md): with ``campus_mcp``, the only modules a plugin imports.
__all__ = [
    "CampusFactory",
    "CampusHarness",
    "JobRunRecord",
    "RestClient",
    "ServedCampus",
    "StudentBrowser",
    "TestDatabases",
    "campus_today",
    "cli_main",
    "free_port",
    "harness_app",
    "load_plugins",
    "plugin_contract",
    "prepare_database",
    "private_redis",
    "serve",
    "test_settings",
]


def plugin_contract(plugin: str) -> type:
    """The tool contract of an installed plugin as a test class: ``TestDiningContract = plugin_contract("dining")``.

    See :mod:`campus_mcp.testing.contract`. Imported on use, so the kit's fixtures do not need jsonschema.
    """
    from campus_mcp.testing.contract import plugin_contract as contract_class

    return contract_class(plugin)


def load_plugins(settings: Settings, extra_plugins: Iterable[tuple[str, object]] = ()) -> Registry:
    """The registry of the plugins ``settings`` enables, plus ``extra_plugins`` ((name, module) pairs),
    as ``campus-mcp serve`` loads it: for a test that checks what a plugin contributes."""
    return load_registry(settings, extra_plugins)


@dataclasses.dataclass(frozen=True)
class JobRunRecord:
    """One run in the job records, as ``campus-mcp jobs list`` shows it."""

    id: int
    job_id: str
    plugin: str
    started_at: datetime
    finished_at: datetime | None
    # running | ok | partial | failed
    outcome: str
    items: int
    lost: dict[str, str]
    summary: str
    error: str | None

    @classmethod
    def of(cls, run: JobRun) -> JobRunRecord:
        return cls(
            id=run.id,
            job_id=run.job_id,
            plugin=run.plugin,
            started_at=run.started_at,
            finished_at=run.finished_at,
            outcome=run.outcome,
            items=run.items,
            lost=dict(run.lost),
            summary=run.summary,
            error=run.error,
        )


@dataclasses.dataclass
class CampusHarness:
    app: Litestar
    registry: Registry

    @property
    def deployment(self) -> Deployment:
        """The app's runtime handle: registry, engine, sessions, MCP server."""
        deployment: Deployment = self.app.state.deployment
        return deployment

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        return self.deployment.sessions

    @property
    def settings(self) -> Settings:
        return self.registry.settings

    def principal(
        self, scopes: Iterable[str] | None = None, *, user_id: int | None = None, username: str | None = None
    ) -> Principal:
        if scopes is None and user_id is None:
            return ANONYMOUS
        granted = frozenset(scopes if scopes is not None else self.registry.scopes)
        return Principal(user_id=user_id, username=username, client_id="test-client", scopes=granted)

    async def student_principal(self, username: str, scopes: Iterable[str] | None = None) -> Principal:
        """The principal of a student (e.g. demo ``student1``) with these scopes (default: all)."""

        async with self.sessions() as session:
            student = await student_by_username(session, username)
        if student is None:
            raise LookupError(f"no student {username!r}; load the demo campus (demo=True) or create one first")
        return self.principal(
            scopes if scopes is not None else self.registry.scopes, user_id=student.id, username=username
        )

    @contextlib.asynccontextmanager
    async def mcp(
        self,
        scopes: Iterable[str] | None = None,
        *,
        user_id: int | None = None,
        mode: str = "legacy",
        principal: Principal | None = None,
        **client_options: Any,
    ) -> AsyncIterator[Client]:
        """An MCP client in the same process, calling as ``principal`` (default: anonymous)."""
        who = principal or self.principal(scopes, user_id=user_id)
        server = self.deployment.mcp
        assert server is not None, "the harness app always has its MCP server"
        token = current_principal.set(who)
        try:
            async with Client(server.server, mode=mode, **client_options) as client:  # type: ignore[arg-type]
                yield client
        finally:
            current_principal.reset(token)

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        scopes: Iterable[str] | None = None,
        user_id: int | None = None,
        principal: Principal | None = None,
    ) -> CallToolResult:
        async with self.mcp(scopes, user_id=user_id, principal=principal) as client:
            return await client.call_tool(tool, arguments or {})

    def rest(self) -> RestClient:
        """A REST client (an ``httpx.AsyncClient``); use as ``async with harness.rest() as client``.
        It runs the app's lifespan, and serves the app on the test's event loop (campus_mcp.testing.rest)."""
        return RestClient(self.app, base_url=self.settings.base_url)

    async def run_job(self, job: str | Job) -> JobRunRecord:
        """Run a job now, as the scheduler would, and return its recorded run. ``job``: a registered
        job's id, or a :class:`~campus_mcp.Job` (one the test built). A failing job is a ``failed`` run."""
        if isinstance(job, str):
            found = self.registry.jobs.get(job)
            if found is None:
                raise LookupError(f"no job {job!r}; the registered jobs: {', '.join(self.registry.jobs) or 'none'}")
            job = found
        return JobRunRecord.of(await run_job(job, self.registry, self.sessions))

    async def job_runs(self, job_id: str | None = None) -> list[JobRunRecord]:
        """The recorded runs of ``job_id`` (every job's if None), oldest first: scheduled runs and
        the ones a plugin recorded itself (``campus_mcp.record_run``)."""
        query = select(JobRun).order_by(JobRun.id)
        if job_id is not None:
            query = query.where(JobRun.job_id == job_id)
        async with self.deployment.session() as session:
            return [JobRunRecord.of(run) for run in await session.scalars(query)]

    def alembic_config(self) -> Config:
        """The Alembic configuration of this campus's database (every installed plugin's branch),
        for a test that moves a plugin's branch down and up (``alembic.command.downgrade``)."""
        return alembic_config(self.registry)

    def check_parity(self, plugin: str | None = None) -> ParityReport:
        """Every tool's REST twin and every REST route's tool, as the parity check of CI sees them
        (with ``plugin``: only the problems that plugin can fix)."""
        return check_parity(self.app, self.registry, plugin=plugin)

    def instructions(self) -> str:
        """The server instructions an MCP client gets from this campus (every plugin's fragments)."""
        return assemble_instructions(self.registry)

    async def close(self) -> None:
        """What the app's shutdown does, for a campus whose lifespan a test never ran (the in-process
        MCP client does not): the access log's queue written and its writer stopped, then the
        engine's connections closed; before the campus's database goes. A writer left on the
        session's loop kept retrying against a PostgreSQL database already dropped, every second
        for the rest of the run (953 failed connections in plugins/schedule/tests alone)."""
        if self.deployment.access_log is not None:
            await self.deployment.access_log.close()
        await self.deployment.engine.dispose()

    async def migrate(self) -> None:
        """Upgrade the enabled plugins' branches to their heads, as ``campus-mcp db upgrade`` does."""
        await asyncio.to_thread(upgrade, self.registry)


async def prepare_database(registry: Registry, *, demo: bool, scale: int = 1) -> None:
    # Alembic runs its own event loop, so it goes to a thread.
    await asyncio.to_thread(upgrade, registry)
    if demo:
        # An engine is all the demo loader needs (as in `campus-mcp demo load`), not a whole app.
        engine = make_engine(registry.settings.database_url, speedups=Switches.of(registry.settings))
        try:
            await load_demo(registry, make_sessions(engine), scale=scale, reload=True)
        finally:
            await engine.dispose()


def harness_app(registry: Registry) -> Litestar:
    """The app of a harness: a deployment's, less the scheduler (a test runs jobs itself).

    Its engine is a deployment's too: every client of the kit runs the app on the test's one event
    loop (campus_mcp.testing.rest), so the pool needs nothing of a test's own."""
    return create_app(registry=registry, run_scheduler=False)


class TestDatabases:
    """Gives every harness a database of its own, and the demo campus from a template.

    SQLite: a file in a temporary folder. PostgreSQL (``CAMPUS_MCP_TEST_DATABASE_URL``): a database
    ``campus_test_<pid>_<n>`` created on that URL's server and dropped at teardown, so that the
    session-wide ``demo_campus`` and the per-test campuses never wipe each other's tables, and two
    test runs against one server do not collide. The demo campus of every installed plugin is built
    once, into a template (a file, or a PostgreSQL template database), and copied: that is much
    cheaper than loading it again.
    """

    __test__ = False  # not a test class, despite the name

    def __init__(self, folder: Path, admin_url: str | None) -> None:
        self.folder = folder
        self.admin_url = admin_url
        self._numbers = itertools.count()
        self._template: str | None = None
        # The migration folders the demo template was upgraded with (see demo_copy_is_current).
        self._template_migrations: frozenset[tuple[str, str]] = frozenset()
        self._template_lock = asyncio.Lock()
        # Migrated, empty databases by plugin selection (plugins, disable): copied like the demo one.
        self._migrated: dict[tuple[tuple[str, ...] | None, tuple[str, ...]], str] = {}
        self._live: set[str] = set()

    @property
    def postgres(self) -> bool:
        return self.admin_url is not None

    def _next_name(self) -> str:
        return f"campus_test_{os.getpid()}_{next(self._numbers)}"

    def _url(self, name: str) -> str:
        if self.admin_url is None:
            return f"sqlite+aiosqlite:///{self.folder / f'{name}.db'}"
        return make_url(self.admin_url).set(database=name).render_as_string(hide_password=False)

    async def _admin(self, statement: str) -> None:
        # CREATE/DROP DATABASE cannot run inside a transaction; a fresh connection each time
        # holds no session open on the template database.
        assert self.admin_url is not None
        engine = create_async_engine(self.admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        try:
            async with engine.connect() as connection:
                await connection.execute(text(statement))
        finally:
            await engine.dispose()

    async def empty(self) -> str:
        """The URL of a new, empty database."""
        name = self._next_name()
        if self.postgres:
            await self._admin(f'CREATE DATABASE "{name}"')
            self._live.add(name)
        return self._url(name)

    async def demo_copy(self) -> str:
        """The URL of a new database holding the demo campus of every installed plugin."""
        return await self._copy(await self._demo_template())

    async def migrated_copy(self, plugins: Sequence[str] | None = None, disable: Sequence[str] = ()) -> str:
        """The URL of a new database with the migrations of that plugin selection applied, and no data.

        The first one of a selection is migrated into a template, the others copy it: an upgrade
        from nothing loads every plugin's migration scripts and costs far more than the copy.
        """
        key = (tuple(plugins) if plugins is not None else None, tuple(disable))
        async with self._template_lock:
            template = self._migrated.get(key)
            if template is None:
                url = await self.empty()
                settings = test_settings(
                    url, plugins=list(plugins) if plugins is not None else None, disable=list(disable)
                )
                await asyncio.to_thread(upgrade, load_registry(settings))
                template = self._migrated[key] = make_url(url).database or ""
        return await self._copy(template)

    async def _copy(self, template: str) -> str:
        name = self._next_name()
        if self.postgres:
            await self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            self._live.add(name)
        else:
            shutil.copy(template, self.folder / f"{name}.db")
        return self._url(name)

    async def _demo_template(self) -> str:
        async with self._template_lock:
            if self._template is None:
                url = await self.empty()
                registry = load_registry(test_settings(url))
                await prepare_database(registry, demo=True)
                self._template_migrations = _migration_folders(registry)
                self._template = make_url(url).database or ""
            return self._template

    def demo_copy_is_current(self, registry: Registry) -> bool:
        """Whether a copy of the demo template already holds every migration ``registry`` would
        apply: the same plugins' version folders as the template's. Then ``db upgrade`` on the copy
        would change nothing, yet cost ~0.3 s of CPU (Alembic reads every plugin's scripts once per
        branch), on each of the run's demo campuses. A plugin installed since the template was built
        (the new-plugin test's) makes the sets differ, and the copy is upgraded as before."""
        return self._template is not None and _migration_folders(registry) == self._template_migrations

    async def drop(self, url: str) -> None:
        name = make_url(url).database or ""
        if self.postgres and name in self._live:
            self._live.discard(name)
            await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    async def close(self) -> None:
        for name in sorted(self._live):
            await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._live.clear()


def _migration_folders(registry: Registry) -> frozenset[tuple[str, str]]:
    return frozenset((migrations.plugin, str(migrations.path)) for migrations in registry.migrations)


# argon2id at its lowest cost (one pass over 8 KiB, one lane) for the passwords a test process hashes
# and verifies. The deployment's own cost (three passes over 64 MiB, four lanes) is there to make
# a stolen table slow to crack, and costs ~0.35 s of CPU per sign-in (hash or verification); the
# suite signs in again and again, and no test checks that cost. A hash keeps its parameters in
# itself, so either side verifies the other's: a `campus-mcp serve` subprocess still hashes at the
# deployment's cost.
TEST_PASSWORD_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
_deployment_hasher = pytest.StashKey[PasswordHasher]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_deployment_hasher] = accounts.password_hasher
    accounts.password_hasher = TEST_PASSWORD_HASHER


def pytest_unconfigure(config: pytest.Config) -> None:
    accounts.password_hasher = config.stash.get(_deployment_hasher, accounts.password_hasher)


def pytest_report_header(config: pytest.Config) -> str:
    """Say which database the test campuses use, so a CI log shows which pass it is."""
    url = os.environ.get(TEST_DATABASE_ENV)
    if not url:
        return "campus databases: SQLite, one file per campus"
    parts = make_url(url)
    return f"campus databases: PostgreSQL on {parts.host}:{parts.port}, one database per campus"


def campus_today(settings: Settings | None = None) -> date:
    """Today on the campus, as the jobs and tools count it (in the deployment's timezone).

    A test that moves a term or a week relative to today uses this, not ``date.today()``: from 19:00
    in Boston the machine's UTC date is already tomorrow, and a test written with the machine's
    date fails every evening (CI did, at 00:05 UTC).
    """
    zone = settings.timezone if settings is not None else Settings.model_fields["timezone"].default
    return datetime.now(ZoneInfo(zone)).date()


CampusFactory = Callable[..., Awaitable[CampusHarness]]


# The kit's async fixtures are pytest-asyncio's own, so they run in any asyncio mode (an author's
# project need not set this repository's ``asyncio_mode = "auto"``), and on the session's loop: the
# databases and the shared demo campus outlive any one test, so they belong to the loop that does too.
@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def campus_databases(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TestDatabases]:
    """The databases of this test session (see :class:`TestDatabases`); dropped at the end."""
    databases = TestDatabases(tmp_path_factory.mktemp("campuses"), os.environ.get(TEST_DATABASE_ENV) or None)
    yield databases
    await databases.close()


@pytest_asyncio.fixture(loop_scope="session")
async def campus_factory(campus_databases: TestDatabases) -> AsyncIterator[CampusFactory]:
    made: list[CampusHarness] = []

    async def factory(
        *,
        plugins: Sequence[str] | None = None,
        disable: Sequence[str] = (),
        extra_plugins: Iterable[tuple[str, object]] = (),
        demo: bool = False,
        demo_mode: bool | None = None,
        plugin_settings: Mapping[str, Mapping[str, Any]] | None = None,
        **overrides: Any,
    ) -> CampusHarness:
        # ``demo`` loads the demo data; ``demo_mode`` is the deployment's demo setting (default on).
        # ``plugin_settings={"dining": {"feed": ...}}``: values of plugins' settings, checked as
        # ``[plugins.<name>]`` values are (a bad one raises PluginError naming it); the rest are host settings.
        if demo_mode is not None:
            overrides["demo"] = demo_mode
        extras = list(extra_plugins)
        # The template holds every installed plugin's demo data: only the default plugin set may copy it.
        from_template = demo and plugins is None and not disable and not extras
        # Without demo data a campus is its selection's migrations only, from a template of them
        # (a plugin given as an object may bring migrations of its own: that one is migrated here).
        migrated = not demo and not extras
        if from_template:
            url = await campus_databases.demo_copy()
        elif migrated:
            url = await campus_databases.migrated_copy(plugins, disable)
        else:
            url = await campus_databases.empty()
        settings = test_settings(
            url, plugins=list(plugins) if plugins is not None else None, disable=list(disable), **overrides
        )
        registry = load_registry(settings, extras, plugin_settings=plugin_settings)
        if from_template:
            if not campus_databases.demo_copy_is_current(registry):
                await asyncio.to_thread(upgrade, registry)
        elif not migrated:
            await prepare_database(registry, demo=demo)
        harness = CampusHarness(app=harness_app(registry), registry=registry)
        made.append(harness)
        return harness

    yield factory
    for harness in made:
        await harness.close()
        await campus_databases.drop(harness.settings.database_url)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def demo_campus(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    url = await campus_databases.demo_copy()
    registry = load_registry(test_settings(url))
    if not campus_databases.demo_copy_is_current(registry):
        await asyncio.to_thread(upgrade, registry)
    harness = CampusHarness(app=harness_app(registry), registry=registry)
    yield harness
    await harness.close()
    await campus_databases.drop(url)
