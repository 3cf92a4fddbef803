"""Alembic environment for Campus MCP: async engine, metadata of every enabled plugin."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

from alembic import context
from campus_mcp.db import Base, make_engine
from sqlalchemy import text
from sqlalchemy.engine import Connection

config = context.config


# Any fixed number of our own: the key of the advisory lock every start's migration takes.
MIGRATION_LOCK_KEY = 0x63616D7075736D63  # "campusmc"


def _applied(ctx: object, step: Any, heads: object, run_args: object) -> None:
    config.attributes.setdefault("applied", []).append(step.up_revision_id)


def _run(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # N servers starting together: one migrates while the others wait here, then find the
        # database at its head and apply nothing (held until this transaction commits).
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        on_version_apply=_applied,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_online() -> None:
    engine = make_engine(config.attributes["database_url"])
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


def _version_rows(ctx: object, step: Any, heads: Collection[str], run_args: object) -> None:
    # The version table's rows after each migration of an offline run (db upgrade --sql), for the
    # next plugin's pass to start from (campus_mcp.migrate.upgrade_sql).
    config.attributes["version_rows"] = set(heads)


if context.is_offline_mode():
    context.configure(
        url=config.attributes["database_url"], target_metadata=Base.metadata, on_version_apply=_version_rows
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_online())
