"""What a job's function gets: the job, the settings, and a database session like a tool's."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.settings import Settings

if TYPE_CHECKING:
    from campus_mcp.assembly.registry import Registry
    from campus_mcp.plugin.contributions import Job


@dataclasses.dataclass(frozen=True)
class JobContext:
    job: Job
    settings: Settings
    registry: Registry
    # The session factory is the host's detail: a job opens sessions with ``session()``.
    sessions: async_sessionmaker[AsyncSession]
    # The id of this run's record in the job records.
    run_id: int

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A database session, closed on leaving; commit what you write. Same as ``ToolContext.session()``."""
        async with self.sessions() as session:
            yield session

    @property
    def plugin_settings(self) -> Any:
        """The settings object of the plugin that contributed this job, or None if it has none."""
        return self.registry.plugin_settings.get(self.job.plugin)
