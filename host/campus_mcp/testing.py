"""The plugin-author kit: a pytest plugin (entry point ``pytest11``) with Campus MCP fixtures.

Fixtures:

- ``campus_factory``: builds a campus (an app with chosen plugins, a migrated database, the demo
  campus if asked) and closes it after the test. ``await campus_factory(plugins=["catalog"])``.
- ``demo_campus``: one campus with every installed plugin and the demo campus, shared by the
  whole test session (read-only tests only: do not change its data).

A :class:`CampusHarness` gives an MCP client bound to the campus with a chosen principal
(``harness.mcp(scopes=..., user_id=...)``), a REST client (``harness.rest()``) and
``harness.call(tool, arguments, ...)`` for one tool call.

The database is SQLite in a temporary folder, or PostgreSQL when ``CAMPUS_MCP_TEST_DATABASE_URL``
is set (CI does both). The demo campus is built once per session and copied (SQLite) or reused
(PostgreSQL) so that tests stay fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from mcp import Client
from mcp_types import CallToolResult
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.app import Campus, create_app
from campus_mcp.demo import load_demo
from campus_mcp.migrate import upgrade
from campus_mcp.principal import ANONYMOUS, Principal, current_principal
from campus_mcp.registry import Registry, load_registry
from campus_mcp.settings import Settings

TEST_DATABASE_ENV = "CAMPUS_MCP_TEST_DATABASE_URL"


@dataclasses.dataclass
class CampusHarness:
    app: Litestar
    registry: Registry

    @property
    def campus(self) -> Campus:
        campus: Campus = self.app.state.campus
        return campus

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        return self.campus.sessions

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
        token = current_principal.set(who)
        try:
            async with Client(self.campus.mcp.server, mode=mode, **client_options) as client:  # type: ignore[arg-type]
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

    def rest(self) -> AsyncTestClient[Litestar]:
        """A REST client; use as ``async with harness.rest() as client``. Runs the app's lifespan."""
        return AsyncTestClient(self.app, base_url=self.settings.base_url)


async def prepare_database(registry: Registry, *, demo: bool, scale: int = 1) -> None:
    # Alembic runs its own event loop, so it goes to a thread.
    await asyncio.to_thread(upgrade, registry)
    if demo:
        harness_app = create_app(registry=registry, run_scheduler=False)
        campus: Campus = harness_app.state.campus
        try:
            await load_demo(registry, campus.sessions, scale=scale, reload=True)
        finally:
            await campus.engine.dispose()


async def reset_postgres(url: str) -> None:
    from campus_mcp.db import make_engine

    engine = make_engine(url)
    async with engine.begin() as connection:
        await connection.execute(text("DROP SCHEMA public CASCADE"))
        await connection.execute(text("CREATE SCHEMA public"))
    await engine.dispose()


def test_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "anonymous_access": True,
        "scheduler": False,
        "demo": True,
        "secret_key": "test-only-secret-key",
    }
    values.update(overrides)
    return Settings(**values)


CampusFactory = Callable[..., Awaitable[CampusHarness]]


@pytest.fixture(scope="session")
def _demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite database with the demo campus, made once per test session."""
    folder = tmp_path_factory.mktemp("demo-template")
    path = folder / "demo.db"
    settings = test_settings(f"sqlite+aiosqlite:///{path}")
    asyncio.run(prepare_database(load_registry(settings), demo=True))
    return path


@pytest.fixture
async def campus_factory(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[CampusFactory]:
    made: list[CampusHarness] = []

    async def factory(
        *,
        plugins: Sequence[str] | None = None,
        disable: Sequence[str] = (),
        extra_plugins: Iterable[tuple[str, object]] = (),
        demo: bool = False,
        **overrides: Any,
    ) -> CampusHarness:
        pg_url = os.environ.get(TEST_DATABASE_ENV)
        if pg_url:
            url = pg_url
            await reset_postgres(url)
        else:
            url = f"sqlite+aiosqlite:///{tmp_path / f'campus-{len(made)}.db'}"
        settings = test_settings(
            url, plugins=list(plugins) if plugins is not None else None, disable=list(disable), **overrides
        )
        registry = load_registry(settings, extra_plugins)
        if demo and not pg_url and plugins is None and not disable and not list(extra_plugins):
            # Same plugin set as the template: copy it instead of generating the demo again.
            template: Path = request.getfixturevalue("_demo_template")
            shutil.copy(template, tmp_path / f"campus-{len(made)}.db")
            await asyncio.to_thread(upgrade, registry)
        else:
            await prepare_database(registry, demo=demo)
        harness = CampusHarness(app=create_app(registry=registry, run_scheduler=False), registry=registry)
        made.append(harness)
        return harness

    yield factory
    for harness in made:
        await harness.campus.engine.dispose()


@pytest.fixture(scope="session")
async def demo_campus(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[CampusHarness]:
    pg_url = os.environ.get(TEST_DATABASE_ENV)
    if pg_url:
        url = pg_url
        await reset_postgres(url)
    else:
        url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('demo-campus') / 'demo.db'}"
    registry = load_registry(test_settings(url))
    await prepare_database(registry, demo=True)
    harness = CampusHarness(app=create_app(registry=registry, run_scheduler=False), registry=registry)
    yield harness
    await harness.campus.engine.dispose()
