"""Migrations at scale (issue 27, point 3): several processes upgrading one database at once take
turns, so the migrations are applied once; ``db current``, ``db history`` and ``db upgrade --sql``;
``serve --no-migrate`` leaves migrating to a migration job and refuses an unmigrated database.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import asyncpg
import pytest
from alembic import command
from campus_mcp.assembly.migrate import alembic_config
from campus_mcp.assembly.registry import load_registry
from campus_mcp.testing import test_settings as settings_for

from tests.support.scale_out import (  # both_engines: the database_url fixture
    SHARED_KEY,
    both_engines,  # noqa: F401
    run_command,
)

PROCESSES = 4


def env_of(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_PLUGINS": "catalog,schedule,dining",
    }


async def test_concurrent_upgrades_apply_each_migration_once(database_url: str, tmp_path: Path) -> None:
    env = env_of(database_url, tmp_path)
    history = await asyncio.to_thread(run_command, "db", "history", env=env)
    assert history.returncode == 0 and "-> " in history.stdout, history.stderr
    empty = await asyncio.to_thread(run_command, "db", "current", env=env)
    assert empty.returncode == 0 and "the database is empty" in empty.stdout, empty.stdout + empty.stderr

    runs = await asyncio.gather(*(asyncio.to_thread(run_command, "db", "upgrade", env=env) for _ in range(PROCESSES)))
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    applied = [int(m[1]) if (m := re.search(r"applied (\d+) migration", run.stdout)) else 0 for run in runs]
    assert sum(1 for count in applied if count) >= 1
    nothing = [run for run in runs if "no migration to apply" in run.stdout]
    assert len(nothing) + sum(1 for count in applied if count) == PROCESSES
    # Each migration applied by exactly one process: the counts add up to one full upgrade's.
    again = await asyncio.to_thread(run_command, "db", "upgrade", env=env)
    assert "The database was already up to date: no migration to apply." in again.stdout, again.stdout
    at = await asyncio.to_thread(run_command, "db", "current", env=env)
    assert "dining_0001" in at.stdout and "(head)" in at.stdout, at.stdout
    total = len(re.findall(r"-> \w+", history.stdout))
    enabled_total = sum(applied)
    assert 0 < enabled_total <= total


async def test_upgrade_sql_prints_the_sql_and_applies_nothing(database_url: str, tmp_path: Path) -> None:
    env = env_of(database_url, tmp_path)
    offline = await asyncio.to_thread(run_command, "db", "upgrade", "--sql", env=env)
    if not database_url.startswith("postgresql"):
        assert offline.returncode == 1 and "--sql writes PostgreSQL's SQL" in offline.stderr, offline.stderr
        return
    assert offline.returncode == 0, offline.stderr[-2000:]
    assert "CREATE TABLE" in offline.stdout and "alembic_version" in offline.stdout
    current = await asyncio.to_thread(run_command, "db", "current", env=env)
    assert "the database is empty" in current.stdout, current.stdout
    # A database administrator runs it as printed: it makes the whole schema, and `db upgrade`
    # then has nothing left (the version table was created once per plugin before: the run failed).
    assert offline.stdout.count("CREATE TABLE alembic_version") == 1, offline.stdout.count(
        "CREATE TABLE alembic_version"
    )
    await run_sql(database_url, offline.stdout)
    after = await asyncio.to_thread(run_command, "db", "upgrade", env=env)
    assert "already up to date: no migration to apply" in after.stdout, after.stdout + after.stderr


async def run_sql(database_url: str, sql: str) -> None:
    """Run ``db upgrade --sql``'s output on the database, as psql -f would."""
    connection = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def migrate_to(database_url: str, revisions: tuple[str, ...]) -> None:
    """The database at ``revisions``, one per plugin: a database one release behind."""
    registry = load_registry(settings_for(database_url, plugins=["catalog", "schedule"], demo=False))
    config = alembic_config(registry)
    for revision in revisions:
        command.upgrade(config, revision)


async def test_upgrade_sql_prints_only_what_is_pending_since_the_database_s_revisions(
    database_url: str, tmp_path: Path
) -> None:
    """Issue 35, point 3: on a database one release behind, `db upgrade --sql` printed the whole
    schema (1,655 lines); a database administrator reviews what is pending since its own revisions."""
    if not database_url.startswith("postgresql"):
        pytest.skip("--sql writes PostgreSQL's SQL (the SQLite half is the refusal above)")
    env = env_of(database_url, tmp_path) | {"CAMPUS_MCP_PLUGINS": "catalog,schedule"}
    await asyncio.to_thread(migrate_to, database_url, ("core_0007", "catalog_0007", "schedule_0001"))
    offline = await asyncio.to_thread(run_command, "db", "upgrade", "--sql", env=env)
    assert offline.returncode == 0, offline.stderr[-2000:]
    sql = offline.stdout
    assert sql.startswith(
        "-- Campus MCP: the 6 migrations pending since the database's revisions "
        "(catalog_0007, core_0007, schedule_0001):\n"
        "-- core_0008, core_0009, core_0010, catalog_0008, schedule_0002, schedule_0003.\n"
    ), sql[:500]
    assert re.findall(r"^-- Running upgrade (\S+) -> (\S+)", sql, re.MULTILINE) == [
        ("core_0007", "core_0008"),
        ("core_0008", "core_0009"),
        ("core_0009", "core_0010"),
        ("catalog_0007", "catalog_0008"),
        ("schedule_0001", "schedule_0002"),
        ("schedule_0002", "schedule_0003"),
    ]
    assert "CREATE TABLE alembic_version" not in sql and "INSERT INTO alembic_version" not in sql
    assert "CREATE TABLE students" not in sql and "CREATE TABLE catalog_sections" not in sql
    assert len(sql.splitlines()) < 250, len(sql.splitlines())  # the whole schema is over 1,600
    assert "The SQL of 6 migrations is on stdout; nothing was applied." in offline.stderr
    current = await asyncio.to_thread(run_command, "db", "current", env=env)
    assert "core_0007" in current.stdout and "core_0008" not in current.stdout, current.stdout  # nothing applied

    # Run as printed, it brings the database up to date.
    await run_sql(database_url, sql)
    up_to_date = await asyncio.to_thread(run_command, "db", "upgrade", "--sql", env=env)
    assert up_to_date.returncode == 0 and up_to_date.stdout == "", up_to_date.stdout
    assert "The database is up to date (at catalog_0008, core_0010, schedule_0003)" in up_to_date.stderr
    assert "no migration is pending, so there is no SQL" in up_to_date.stderr
    assert "no migration to apply" in (await asyncio.to_thread(run_command, "db", "upgrade", env=env)).stdout

    # A family switched on later: its branch alone, its first version row added beside the others.
    with_settings = env | {"CAMPUS_MCP_PLUGINS": "catalog,schedule,settings"}
    new_family = await asyncio.to_thread(run_command, "db", "upgrade", "--sql", env=with_settings)
    assert re.findall(r"^-- Running upgrade (\S*) ?-> (\S+)", new_family.stdout, re.MULTILINE) == [
        ("", "settings_0001"),
        ("settings_0001", "settings_0002"),
    ], new_family.stdout
    assert "INSERT INTO alembic_version (version_num) VALUES ('settings_0001')" in new_family.stdout
    assert "CREATE TABLE alembic_version" not in new_family.stdout
    await run_sql(database_url, new_family.stdout)
    done = await asyncio.to_thread(run_command, "db", "upgrade", env=with_settings)
    assert "no migration to apply" in done.stdout, done.stdout


async def test_serve_no_migrate_refuses_an_unmigrated_database(database_url: str, tmp_path: Path) -> None:
    env = env_of(database_url, tmp_path) | {
        "CAMPUS_MCP_DEMO": "false",
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PORT": "1",  # never reached
    }
    answer = await asyncio.to_thread(run_command, "serve", "--no-migrate", env=env)
    assert answer.returncode == 2 and "the database is not migrated for" in answer.stderr, answer.stderr
    assert "Traceback" not in answer.stderr
