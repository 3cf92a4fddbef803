"""The plugins' warm-ups: work each plugin asks to do in the background when a server process starts.

A plugin names one in ``PluginInfo(warm_up=...)`` (the catalog loads the vectors a search by
meaning scores, so the first student to search does not wait seconds for them). They start when
the app's lifespan does, beside it: readiness and the first requests do not wait for them, and a
request that needs what one is loading waits for it in the plugin's own code (or loads it). A
failing warm-up is logged and changes nothing else; one still running when the server stops is
cancelled before the database engine is disposed of.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from campus_mcp.assembly.registry import Registry

log = logging.getLogger(__name__)


async def _warm_up(
    name: str,
    run: Callable[[async_sessionmaker[AsyncSession]], Awaitable[None]],
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    try:
        await run(sessions)
    except Exception:  # a warm-up only saves a later request some time; the server works without it
        log.exception("the warm-up of plugin %r failed; its first requests do the work instead", name)


@contextlib.asynccontextmanager
async def warm_ups(
    registry: Registry, sessions: async_sessionmaker[AsyncSession]
) -> AsyncIterator[list[asyncio.Task[None]]]:
    """Run every enabled plugin's warm-up in the background for the duration of the block."""
    tasks = [
        asyncio.create_task(_warm_up(info.name, info.warm_up, sessions), name=f"warm-up {info.name}")
        for info in registry.plugins.values()
        if info.warm_up is not None
    ]
    try:
        yield tasks
    finally:
        for task in tasks:
            task.cancel()
        # Awaited: a cancelled load must give its connection back before the engine is disposed of.
        await asyncio.gather(*tasks, return_exceptions=True)
