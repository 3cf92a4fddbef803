"""A plugin's jobs: what it declares (:class:`Job`, its trigger, what a run did) and what a run's
function gets (:class:`JobContext`: the job, the settings, and a database session like a tool's)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from campus_mcp.base.settings import Settings

if TYPE_CHECKING:
    # Types only: the registry reads a plugin's jobs in commands that never open the database
    # (campus-mcp plugins), and those leave SQLAlchemy unloaded (tests/cli/test_cli_startup.py).
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


@dataclasses.dataclass(frozen=True, kw_only=True)
class Cron:
    """A cron trigger in the campus time zone; fields follow APScheduler's ``CronTrigger``."""

    minute: str = "0"
    hour: str = "*"
    day: str = "*"
    day_of_week: str = "*"
    month: str = "*"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Interval:
    minutes: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """What a run did. ``lost`` names items that could not be stored, with the reason."""

    items: int = 0
    lost: Mapping[str, str] = dataclasses.field(default_factory=dict)
    summary: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Job:
    id: str
    description: str
    trigger: Cron | Interval
    run: Callable[[JobContext], Awaitable[JobOutcome | None]]
    refreshes: tuple[str, ...] = ()
    plugin: str = ""


@dataclasses.dataclass(frozen=True)
class JobContext:
    job: Job
    settings: Settings
    # The session factory is the host's detail: a job opens sessions with ``session()``.
    sessions: async_sessionmaker[AsyncSession]
    # The id of this run's record in the job records.
    run_id: int
    # The settings object of the plugin that contributed this job (its PluginInfo.settings_model,
    # loaded once at start-up), or None for a plugin without one.
    plugin_settings: Any = None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A database session, closed on leaving; commit what you write. Same as ``ToolContext.session()``."""
        async with self.sessions() as session:
            yield session
