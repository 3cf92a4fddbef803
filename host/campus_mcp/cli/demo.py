"""Loading the demo campus: every enabled plugin's demo loader, in order, in one transaction.

Which plugins' demo data a database holds is kept in ``campus_state``, one row per plugin
(``demo_loaded:<plugin>``) beside the campus's own row (``demo_loaded``, its scale). A plugin
installed after the demo campus was loaded is then loaded on its own at the next start
(:func:`load_new_plugin_demos`), instead of its tools answering an empty list on a demo campus.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Table, delete, exists, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.registry import Registry
from campus_mcp.base.db import Base
from campus_mcp.jobs.scheduler import forget_made_up_runs
from campus_mcp.plugin.contributions import DemoData
from campus_mcp.plugin.data_versions import CampusState

# Tables a reload keeps: the history of runs and the state of the deployment itself.
KEEP_ON_RELOAD = {"job_runs", "campus_state", "alembic_version"}
CAMPUS_KEY = "demo_loaded"
PLUGIN_KEY = "demo_loaded:"


async def demo_loaded(session: AsyncSession) -> bool:
    row = await session.get(CampusState, CAMPUS_KEY)
    return row is not None


async def _remember(session: AsyncSession, key: str, scale: int) -> None:
    row = await session.get(CampusState, key)
    if row is None:
        session.add(CampusState(key=key, value=str(scale)))
    else:
        row.value = str(scale)


async def _existing_tables(session: AsyncSession) -> set[str]:
    return set(await session.run_sync(lambda s: inspect(s.connection()).get_table_names()))


async def _run_loaders(session: AsyncSession, loaders: Sequence[DemoData], scale: int) -> list[str]:
    """Run the loaders in order and note each plugin as loaded; the plugins, in that order."""
    plugins: list[str] = []
    for loader in loaders:
        await loader.load(session, scale)
        await session.flush()
        if loader.plugin not in plugins:
            plugins.append(loader.plugin)
    for plugin in plugins:
        await _remember(session, PLUGIN_KEY + plugin, scale)
    return plugins


async def load_demo(
    registry: Registry, sessions: async_sessionmaker[AsyncSession], scale: int = 1, *, reload: bool = True
) -> bool:
    """Load the demo campus. Without ``reload``, only into a database that has none yet."""
    if not reload:
        async with sessions() as session:
            if await demo_loaded(session):
                return False
    async with sessions() as session, session.begin():
        # Base.metadata holds every model imported in this process, also those of plugins that are
        # not enabled here (their tables were never created): clear only the tables that exist.
        tables = await _existing_tables(session)
        for table in reversed(Base.metadata.sorted_tables):
            if table.name not in KEEP_ON_RELOAD and table.name in tables:
                await session.execute(delete(table))
        await forget_made_up_runs(session)
        await _run_loaders(session, registry.demo_data, scale)
        await _remember(session, CAMPUS_KEY, scale)
    return True


async def load_new_plugin_demos(registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> list[str]:
    """On a demo campus, load the demo data of each enabled plugin that has none there yet.

    Returns the plugins loaded (none: nothing to do, or no demo campus in this database).
    """
    async with sessions() as session, session.begin():
        campus = await session.get(CampusState, CAMPUS_KEY)
        if campus is None:
            return []
        scale = int(campus.value) if campus.value.isdigit() else 1
        marked = set(
            (await session.scalars(select(CampusState.key).where(CampusState.key.startswith(PLUGIN_KEY)))).all()
        )
        loaded = {key.removeprefix(PLUGIN_KEY) for key in marked}
        if not loaded:
            loaded = await _plugins_with_data(session, registry.demo_data)
            for plugin in loaded:
                await _remember(session, PLUGIN_KEY + plugin, scale)
        return await _run_loaders(session, [d for d in registry.demo_data if d.plugin not in loaded], scale)


async def _plugins_with_data(session: AsyncSession, loaders: Sequence[DemoData]) -> set[str]:
    """The plugins whose tables hold rows: what a demo campus loaded before it kept a row per plugin.

    A plugin's tables are those of the models of the package its demo loader comes from.
    """
    existing = await _existing_tables(session)
    found: set[str] = set()
    for loader in loaders:
        package = loader.load.__module__.split(".", 1)[0]
        tables = [
            mapper.local_table
            for mapper in Base.registry.mappers
            if mapper.class_.__module__.split(".", 1)[0] == package and isinstance(mapper.local_table, Table)
        ]
        for table in tables:
            if table.name in existing and await session.scalar(select(exists().select_from(table))):
                found.add(loader.plugin)
                break
    return found
