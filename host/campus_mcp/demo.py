"""Loading the demo campus: every enabled plugin's demo loader, in order, in one transaction."""

from __future__ import annotations

from sqlalchemy import Integer, String, delete, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.db import Base
from campus_mcp.jobs import forget_made_up_runs
from campus_mcp.registry import Registry

# Tables a reload keeps: the history of runs and the state of the deployment itself.
KEEP_ON_RELOAD = {"job_runs", "campus_state", "alembic_version"}


class CampusState(Base):
    """Small facts about the deployment, such as whether the demo campus was loaded."""

    __tablename__ = "campus_state"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(String(1000))
    version: Mapped[int] = mapped_column(Integer, default=1)


async def demo_loaded(session: AsyncSession) -> bool:
    row = await session.get(CampusState, "demo_loaded")
    return row is not None


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
        tables = set(await session.run_sync(lambda s: inspect(s.connection()).get_table_names()))
        for table in reversed(Base.metadata.sorted_tables):
            if table.name not in KEEP_ON_RELOAD and table.name in tables:
                await session.execute(delete(table))
        await forget_made_up_runs(session)
        for loader in registry.demo_data:
            await loader.load(session, scale)
            await session.flush()
        existing = (
            await session.execute(select(CampusState).where(CampusState.key == "demo_loaded"))
        ).scalar_one_or_none()
        if existing is None:
            session.add(CampusState(key="demo_loaded", value=str(scale)))
        else:
            existing.value = str(scale)
    return True
