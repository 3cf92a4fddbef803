"""Data versions (``campus_mcp.read_versions``, ``campus_mcp.version_bump``): what a plugin keys its
caches by, in place of writing the host's ``campus_state`` table itself (issue 25, point 4)."""

from __future__ import annotations

from datetime import UTC, datetime

from campus_mcp import read_versions, version_bump
from campus_mcp.mcp.advisory import freshness
from campus_mcp.testing import CampusFactory

KEYS = ["dining_data_version", "dining_menu_version"]


async def test_a_key_starts_at_0_and_each_committed_bump_adds_one(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[])
    async with campus.sessions() as session:
        assert await read_versions(session, KEYS) == {"dining_data_version": 0, "dining_menu_version": 0}
        dialect = session.get_bind().dialect.name
        await session.execute(version_bump(dialect, KEYS))
        await session.execute(version_bump(dialect, KEYS[:1]))
        await session.commit()
        assert await read_versions(session, KEYS) == {"dining_data_version": 2, "dining_menu_version": 1}
    # On a Core connection too (another process's importer); a rolled-back bump moves nothing.
    async with campus.deployment.engine.connect() as connection:
        await connection.execute(version_bump(dialect, KEYS[1:]))
        await connection.rollback()
        assert await read_versions(connection, KEYS) == {"dining_data_version": 2, "dining_menu_version": 1}


async def test_a_bump_committed_in_this_process_forgets_the_freshness_times(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[])
    key = (campus.settings.database_url, "dining")
    async with campus.sessions() as session:
        freshness._cached[key] = (0.0, datetime(2030, 1, 1, tzinfo=UTC))
        await session.execute(version_bump(session.get_bind().dialect.name, KEYS))
        await session.rollback()
        assert key in freshness._cached, "a rolled-back bump changed nothing"
        await session.execute(version_bump(session.get_bind().dialect.name, KEYS))
        await session.commit()
    assert key not in freshness._cached
