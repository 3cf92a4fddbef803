"""Alembic over every enabled plugin: one version branch per plugin, labelled with its name.

A deployment switches families on and off, so a database can hold the revisions of a plugin
that is disabled now. Alembic refuses to start when the database names a revision it cannot
find, so the version folders of every *installed* plugin are on the path, while only the enabled
plugins' branches are upgraded: switching a family off never breaks start-up, and its tables
stay as they were until it is switched on again.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url

from campus_mcp.assembly.registry import PluginError, Registry, installed_plugin_names, load_registry
from campus_mcp.base.db import make_engine
from campus_mcp.plugin.contributions import Migrations

log = logging.getLogger(__name__)

SCRIPT_LOCATION = Path(__file__).parent.parent / "migrations"


def installed_migrations(registry: Registry) -> Sequence[Migrations]:
    """The version folders of every installed plugin, enabled or not."""
    if set(installed_plugin_names()) <= set(registry.plugins):
        # Every installed plugin is loaded already (the default deployment, and every test campus
        # with all families): loading them all a second time cost 0.35-0.5 s per upgrade.
        return registry.migrations
    everything = registry.settings.model_copy(update={"plugins": None, "disable": []})
    try:
        installed = load_registry(everything).migrations
    except PluginError as exc:
        # An installed plugin that cannot load at all: resolve with the enabled ones only.
        log.warning("migrations of disabled plugins are not on the path: %s", exc)
        return registry.migrations
    enabled = {m.plugin for m in registry.migrations}
    # The enabled registry may hold plugins that are not installed (tests register them).
    return [*registry.migrations, *(m for m in installed if m.plugin not in enabled)]


def alembic_config(registry: Registry, database_url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    locations = sorted({str(m.path) for m in installed_migrations(registry)})
    # Alembic splits version_locations on this separator; paths never contain a newline.
    config.set_main_option("path_separator", "newline")
    config.set_main_option("version_locations", "\n".join(locations))
    config.attributes["database_url"] = database_url or registry.settings.database_url
    config.attributes["registry"] = registry
    return config


def upgrade(registry: Registry, database_url: str | None = None, *, sql: bool = False) -> list[str]:
    """Apply the enabled plugins' migrations (``campus-mcp db upgrade``); the revisions applied. Blocking.

    Each plugin's branch is upgraded to its head by its label (the plugin's name), so the
    branches of installed but disabled plugins are left alone. Several processes upgrading at
    once take turns: PostgreSQL's advisory lock (migrations/env.py), a lock file beside a SQLite
    database, so the first applies the migrations and the others find nothing to do. ``sql``:
    Alembic's offline mode, the SQL written to stdout and nothing applied.
    """
    config = alembic_config(registry, database_url)
    with _file_lock(config.attributes["database_url"]):
        for plugin in dict.fromkeys(m.plugin for m in registry.migrations):
            command.upgrade(config, f"{plugin}@head", sql=sql)
    applied: list[str] = config.attributes.get("applied", [])
    return applied


def database_state(registry: Registry, database_url: str | None = None) -> tuple[set[str], set[str]]:
    """The tables of the database and the migration revisions recorded in it. Blocking.

    ``campus-mcp db upgrade`` compares them before and after, to say what it did."""
    import asyncio

    from sqlalchemy import inspect, text

    async def read() -> tuple[set[str], set[str]]:
        engine = make_engine(database_url or registry.settings.database_url)
        try:
            async with engine.connect() as connection:
                tables = set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))
                if "alembic_version" not in tables:
                    return tables, set()
                rows = await connection.execute(text("SELECT version_num FROM alembic_version"))
                return tables, {str(row[0]) for row in rows}
        finally:
            await engine.dispose()

    return asyncio.run(read())


@contextlib.contextmanager
def _file_lock(database_url: str) -> Iterator[None]:
    """A lock file beside a SQLite database file for the length of an upgrade (PostgreSQL takes
    its advisory lock instead); nothing for an in-memory database."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        yield
        return
    path = Path(url.database).with_name(Path(url.database).name + ".migrate.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def current(registry: Registry) -> list[str]:
    """Each revision the database is at, with its plugin's label (``campus-mcp db current``)."""
    lines: list[str] = []
    config = alembic_config(registry)
    config.print_stdout = lambda text, *args: lines.append(text % args if args else text)  # type: ignore[method-assign]
    command.current(config)
    return lines


def history(registry: Registry) -> list[str]:
    """Every revision of the installed plugins, newest first (``campus-mcp db history``)."""
    lines: list[str] = []
    config = alembic_config(registry)
    config.print_stdout = lambda text, *args: lines.append(text % args if args else text)  # type: ignore[method-assign]
    command.history(config)
    return lines
