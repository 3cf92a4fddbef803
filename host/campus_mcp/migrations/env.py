"""Alembic environment for Campus MCP: async engine, metadata of every enabled plugin."""

from __future__ import annotations

import asyncio

from alembic import context
from campus_mcp.db import Base, make_engine
from sqlalchemy.engine import Connection

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_online() -> None:
    engine = make_engine(config.attributes["database_url"])
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=config.attributes["database_url"], target_metadata=Base.metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_online())
