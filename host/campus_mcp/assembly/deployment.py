"""One deployment's runtime handle: its plugins, its database and, in the web app, its MCP server.

Named ``Deployment`` rather than "campus" on purpose: "campus" is the institution, a catalog
table (a university's campuses) and the test kit's word for a test app, never this object.

The web app keeps one on ``app.state.deployment`` and gives it to routes as the ``deployment``
dependency. A plugin's command-line command opens one without the web app
(:func:`open_deployment`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.base.read_sessions import read_sessions
from campus_mcp.base.settings import Settings
from campus_mcp.base.speedups import Switches
from campus_mcp.plugin.principal import Principal

# Who reads a student's data through an app: an OAuth client, a personal access token, the calendar feed.
AppKind = Literal["oauth", "token", "feed"]


class AccessRecorder(Protocol):
    """What the deployment and the MCP server use of the access log of student data (the web app's
    :class:`campus_mcp.students.access_log.AccessLog`, a floor above them)."""

    def record_call(self, principal: Principal, *, door: str, action: str, outcome: str) -> None: ...

    def record(
        self, student_id: int, *, app_kind: AppKind, app_id: str, door: str, action: str, outcome: str
    ) -> None: ...

    async def write_pending(self) -> int: ...

    async def close(self) -> None: ...


class Deployment:
    """The registry of enabled plugins, the database engine and its sessions.

    ``mcp`` and ``endpoint`` (the MCP server and the ``/api/mcp`` endpoint: a
    :class:`campus_mcp.mcp.server.CampusServer` and a :class:`campus_mcp.mcp.endpoint.McpEndpoint`,
    named here without their types, a floor above) are the web app's: a deployment opened with
    :func:`open_deployment` has neither. ``access_log`` too; a plugin's
    route that reads a student's data for an app records it with :meth:`record_student_access`.
    """

    # A plain class, not a dataclass: Litestar reads a dataclass's fields to validate it as a route
    # dependency, and these fields (an engine, the MCP server) are not data.
    __slots__ = ("access_log", "endpoint", "engine", "mcp", "registry", "sessions")

    def __init__(
        self,
        *,
        registry: Registry,
        engine: AsyncEngine,
        sessions: async_sessionmaker[AsyncSession],
        mcp: Any = None,
        endpoint: Any = None,
        access_log: AccessRecorder | None = None,
    ) -> None:
        self.registry = registry
        # The access log of student data (campus_mcp.students.access_log); the web app's, else None.
        self.access_log = access_log
        self.engine = engine
        self.sessions = sessions
        self.mcp = mcp
        self.endpoint = endpoint

    def __repr__(self) -> str:
        return f"Deployment(plugins={sorted(self.registry.plugins)!r})"

    @property
    def settings(self) -> Settings:
        """The host's settings (``CAMPUS_MCP_*``, ``campus-mcp.toml``)."""
        return self.registry.settings

    @asynccontextmanager
    async def session(self, *, read_only: bool = False) -> AsyncIterator[AsyncSession]:
        """A database session, closed on leaving; commit what you write. ``read_only=True``: no
        transaction, and a write fails (``campus_mcp.base.read_sessions``). Same as
        ``ToolContext.session()``."""
        sessions = read_sessions(self.sessions) if read_only else self.sessions
        async with sessions() as session:
            yield session

    def record_student_access(
        self, student_id: int, *, app_kind: AppKind, app_id: str, door: str, action: str, outcome: str
    ) -> None:
        """Put one read or change of ``student_id``'s data by an app in the access log (tools and
        REST twins are recorded by the host; a plugin's own door, such as the calendar feed, calls
        this). Queued, never awaited; nothing without the web app's log (``access_log``)."""
        if self.access_log is not None:
            self.access_log.record(
                student_id, app_kind=app_kind, app_id=app_id, door=door, action=action, outcome=outcome
            )

    def plugin_settings(self, name: str) -> Any:
        """The settings object of the plugin ``name`` (its ``PluginInfo.settings_model``), or None."""
        return self.registry.plugin_settings.get(name)


@asynccontextmanager
async def open_deployment(settings: Settings | None = None, *, migrate: bool = True) -> AsyncIterator[Deployment]:
    """A deployment without the web app, for a plugin's command-line command.

    Loads the enabled plugins (a plugin that cannot load raises ``PluginError``, with what to
    do), migrates the database first as ``campus-mcp serve`` does (``migrate=False`` to skip),
    and disposes of the engine on leaving.
    """
    settings = settings or Settings()
    registry = load_registry(settings)
    if migrate:
        # Alembic loads only for a command that migrates (migrate=False skips it).
        from campus_mcp.assembly.migrate import upgrade

        # Alembic runs its own event loop for the async engine, so not on this one.
        await asyncio.to_thread(upgrade, registry)
    engine = make_engine(settings.database_url, speedups=Switches.of(settings))
    try:
        yield Deployment(registry=registry, engine=engine, sessions=make_sessions(engine))
    finally:
        await engine.dispose()
