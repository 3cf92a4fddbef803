"""The kit's demo campuses are copies of one migrated template, and a copy is not migrated again.

``campus_factory(demo=True)`` and ``demo_campus`` copy the session's demo template; running every
plugin's Alembic branch over such a copy changed nothing and cost ~0.3 s of CPU a campus. The kit
now skips it when the campus loads the very migration folders the template was built with, and
still upgrades when they differ (a plugin installed since, as the new-plugin test does).
"""

from __future__ import annotations

from typing import Any

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.testing import CampusFactory, TestDatabases, load_plugins
from campus_mcp.testing import test_settings as campus_settings
from sqlalchemy.engine import Connection


def _current_heads(connection: Connection) -> set[str]:
    return set(MigrationContext.configure(connection).get_current_heads())


async def test_a_demo_campus_is_at_every_head_without_a_second_upgrade(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    upgraded: list[Any] = []

    def counted_upgrade(registry: Any, *args: Any) -> None:
        upgraded.append(registry)
        upgrade(registry, *args)

    await campus_factory(demo=True)  # the template is built (and migrated) by the first demo campus
    monkeypatch.setattr("campus_mcp.testing.kit.upgrade", counted_upgrade)
    campus = await campus_factory(demo=True)

    assert upgraded == []
    expected = set(ScriptDirectory.from_config(campus.alembic_config()).get_heads())
    async with campus.deployment.engine.connect() as connection:
        assert await connection.run_sync(_current_heads) == expected
    assert (await campus.student_principal("student1")).username == "student1"  # and it holds the demo campus


async def test_a_campus_of_other_migration_folders_is_not_taken_for_a_current_copy(
    campus_factory: CampusFactory, campus_databases: TestDatabases
) -> None:
    campus = await campus_factory(demo=True)
    assert campus_databases.demo_copy_is_current(campus.registry)
    only_catalog = load_plugins(campus_settings(campus.settings.database_url, plugins=["catalog"]))
    assert not campus_databases.demo_copy_is_current(only_catalog)
