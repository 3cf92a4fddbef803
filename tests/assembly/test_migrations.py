"""Alembic, one version branch per plugin: applied together, each on its own, and matching the models."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from campus_mcp import testing
from campus_mcp.assembly.migrate import alembic_config, upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.db import Base
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

REGISTRY = load_registry(testing.test_settings("sqlite+aiosqlite:///never-opened.db"))


def scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config(REGISTRY))


async def table_names(campus: CampusHarness) -> set[str]:
    async with campus.deployment.engine.connect() as connection:
        return set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))


@pytest.mark.parametrize("migrations", REGISTRY.migrations, ids=lambda m: m.plugin)
def test_each_plugin_is_one_branch_labelled_with_its_name(migrations: Any) -> None:
    folder = Path(migrations.path)
    revisions = [r for r in scripts().walk_revisions() if Path(r.path).parent == folder]
    assert revisions, f"{migrations.plugin}'s migration folder {folder.name} has no revision"
    roots = [r for r in revisions if r.down_revision is None]
    assert len(roots) == 1, f"{migrations.plugin} has {len(roots)} first revisions; a branch has one"
    [root] = roots
    assert migrations.plugin in root.branch_labels, f"{root.revision} lacks branch_labels=({migrations.plugin!r},)"
    if migrations.plugin != "core":
        assert root.dependencies, f"{root.revision} should depend on core_0001 (or the plugin revision it needs)"


def test_revision_ids_name_their_plugin() -> None:
    for migrations in REGISTRY.migrations:
        folder = Path(migrations.path)
        for revision in scripts().walk_revisions():
            if Path(revision.path).parent == folder:
                assert revision.revision.startswith(f"{migrations.plugin}_"), (
                    f"{revision.revision} in {migrations.plugin}'s folder: start revision ids with "
                    f"'{migrations.plugin}_' so two plugins never pick the same id"
                )


def modelled_only(item: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """Leave out what only the database has: full-text tables and expression indexes made by raw SQL."""
    return not (reflected and compare_to is None)


async def test_upgrade_reaches_every_head_and_matches_the_models(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=False)
    heads = set(scripts().get_heads())

    def check(connection: Connection) -> tuple[set[str], list[Any]]:
        context = MigrationContext.configure(connection, opts={"compare_type": False, "include_object": modelled_only})
        current = set(context.get_current_heads())
        return current, compare_metadata(context, Base.metadata)

    async with campus.deployment.engine.connect() as connection:
        current, differences = await connection.run_sync(check)
    assert current == heads
    # A model table, column or index that no migration creates shows up here.
    assert differences == [], "models and migrations differ:\n" + "\n".join(map(str, differences[:20]))


async def test_a_disabled_plugins_tables_are_not_created(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=False, disable=["dining"])
    tables = await table_names(campus)
    assert "job_runs" in tables
    assert not {"dining_halls", "dining_hours"} & tables


async def test_one_plugins_branch_goes_down_and_up_alone(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=False)
    config = alembic_config(campus.registry)
    before = await table_names(campus)
    await asyncio.to_thread(command.downgrade, config, "dining@base")
    after_down = await table_names(campus)
    assert before - after_down == {"dining_halls", "dining_hours"}
    await asyncio.to_thread(command.upgrade, config, "heads")
    assert await table_names(campus) == before


async def test_switching_a_family_off_and_on_keeps_the_database_usable(campus_factory: CampusFactory) -> None:
    # The database was made with every plugin, dining included; the deployment then disables dining.
    campus = await campus_factory(demo=False)
    before = await table_names(campus)
    assert {"dining_halls", "dining_hours"} <= before
    without_dining = load_registry(campus.settings.model_copy(update={"disable": ["dining"]}))
    await asyncio.to_thread(upgrade, without_dining)  # refused with "Can't locate revision" before
    assert await table_names(campus) == before  # the disabled family's tables are kept as they were

    # A database made without dining gets its tables when dining is switched on.
    fresh = await campus_factory(demo=False, disable=["dining"])
    assert not {"dining_halls", "dining_hours"} & await table_names(fresh)
    await asyncio.to_thread(upgrade, load_registry(fresh.settings.model_copy(update={"disable": []})))
    assert {"dining_halls", "dining_hours"} <= await table_names(fresh)
