"""Migrations at scale (issue 27, point 3): several processes upgrading one database at once take
turns, so the migrations are applied once; ``db current``, ``db history`` and ``db upgrade --sql``;
``serve --no-migrate`` leaves migrating to a migration job and refuses an unmigrated database.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

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


async def test_serve_no_migrate_refuses_an_unmigrated_database(database_url: str, tmp_path: Path) -> None:
    env = env_of(database_url, tmp_path) | {
        "CAMPUS_MCP_DEMO": "false",
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PORT": "1",  # never reached
    }
    answer = await asyncio.to_thread(run_command, "serve", "--no-migrate", env=env)
    assert answer.returncode == 2 and "the database is not migrated for" in answer.stderr, answer.stderr
    assert "Traceback" not in answer.stderr
