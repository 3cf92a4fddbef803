"""A plugin installed after the demo campus was loaded gets its demo data at the next start.

Before, ``serve`` loaded the demo only into a database without one, so the dining example, enabled
on an existing demo campus, answered an empty list of halls with nothing said.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
from pathlib import Path

from campus_catalog.models import Section
from campus_dining.models import DiningHall
from campus_mcp import testing
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.cli.demo import PLUGIN_KEY, load_new_plugin_demos
from campus_mcp.plugin.data_versions import CampusState
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port
from sqlalchemy import delete, func, select

from tests.cli.test_cli import CLI, run_cli


def start_serve(folder: Path, env: dict[str, str]) -> list[str]:
    """Start ``campus-mcp serve``, and stop it once it says it is serving; what it printed until then."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    environment.update(env, PYTHONUNBUFFERED="1", CAMPUS_MCP_SCHEDULER="false")
    server = subprocess.Popen(
        [str(CLI), "serve", "--port", str(free_port())],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert server.stdout is not None
        for line in server.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Serving "):
                break
        else:
            raise AssertionError(
                "serve stopped before serving:\n" + "\n".join(lines) + (server.stderr.read() if server.stderr else "")
            )
    finally:
        server.terminate()
        server.wait(timeout=60)
    return lines


def halls(database: Path) -> int:
    with sqlite3.connect(database) as db:
        count: int = db.execute("SELECT count(*) FROM dining_halls").fetchone()[0]
        return count


def test_serve_loads_the_demo_of_a_plugin_new_on_the_demo_campus_once(tmp_path: Path) -> None:
    env = {"CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"}
    made = run_cli("demo", cwd=tmp_path, CAMPUS_MCP_DISABLE="dining", **env)
    assert made.returncode == 0, made.stderr

    first = start_serve(tmp_path, env)
    assert [line for line in first if line.startswith("Loaded ")] == [
        "Loaded the demo data of dining, new on this demo campus."
    ]
    assert halls(tmp_path / "campus.db") == 3

    second = start_serve(tmp_path, env)
    assert [line for line in second if line.startswith("Loaded ")] == []
    assert halls(tmp_path / "campus.db") == 3


async def test_a_demo_campus_from_before_the_rows_per_plugin_loads_only_what_it_lacks(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(disable=["dining"], demo=True)
    async with campus.sessions() as session, session.begin():
        # A demo campus loaded before this change has the campus's row and no row per plugin.
        await session.execute(delete(CampusState).where(CampusState.key.startswith(PLUGIN_KEY)))
    with_dining = load_registry(testing.test_settings(campus.settings.database_url))
    await asyncio.to_thread(upgrade, with_dining)
    assert await load_new_plugin_demos(with_dining, campus.sessions) == ["dining"]
    assert await load_new_plugin_demos(with_dining, campus.sessions) == []

    async with campus.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(DiningHall)) == 3
        # The catalog, whose data was there, was not loaded a second time.
        sections = await session.scalar(select(func.count()).select_from(Section))
    fresh = await campus_factory(demo=True)
    async with fresh.sessions() as session:
        assert sections == await session.scalar(select(func.count()).select_from(Section))
