"""Alembic over every enabled plugin: one version branch per plugin, labelled with its name.

A deployment switches families on and off, so a database can hold the revisions of a plugin
that is disabled now. Alembic refuses to start when the database names a revision it cannot
find, so the version folders of every *installed* plugin are on the path, while only the enabled
plugins' branches are upgraded: switching a family off never breaks start-up, and its tables
stay as they were until it is switched on again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext, MigrationStep
from alembic.script import Script, ScriptDirectory
from sqlalchemy.engine import make_url

from campus_mcp.contributions import Migrations
from campus_mcp.registry import PluginError, Registry, installed_plugin_names, load_registry

log = logging.getLogger(__name__)

SCRIPT_LOCATION = Path(__file__).parent / "migrations"


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


def upgrade(registry: Registry, database_url: str | None = None) -> list[str]:
    """Apply the enabled plugins' migrations (``campus-mcp db upgrade``); the revisions applied. Blocking.

    Each plugin's branch is upgraded to its head by its label (the plugin's name), so the
    branches of installed but disabled plugins are left alone. Several processes upgrading at
    once take turns: PostgreSQL's advisory lock (migrations/env.py), a lock file beside a SQLite
    database, so the first applies the migrations and the others find nothing to do.
    """
    config = alembic_config(registry, database_url)
    with _file_lock(config.attributes["database_url"]):
        for plugin in dict.fromkeys(m.plugin for m in registry.migrations):
            command.upgrade(config, f"{plugin}@head", sql=False)
    applied: list[str] = config.attributes.get("applied", [])
    return applied


@dataclasses.dataclass(frozen=True)
class Pending:
    """What ``db upgrade`` would apply: the database's own revisions, and the revisions after them
    up to the enabled plugins' heads, in the order they apply."""

    since: tuple[str, ...]
    revisions: tuple[str, ...]


def _enabled_heads(script: ScriptDirectory, registry: Registry) -> tuple[str, ...]:
    plugins = dict.fromkeys(m.plugin for m in registry.migrations)
    return tuple(
        revision.revision for plugin in plugins for revision in script.get_revisions(f"{plugin}@head") if revision
    )


def _pending_scripts(script: ScriptDirectory, targets: tuple[str, ...], heads: tuple[str, ...]) -> list[Script]:
    """The revisions an online upgrade from ``heads`` (the database's) to ``targets`` applies,
    oldest first."""
    return list(reversed(list(script.iterate_revisions(targets, heads or None, implicit_base=True))))


def pending(registry: Registry, database_url: str | None = None) -> Pending:
    """The database's revisions and the enabled plugins' migrations it has not had, plugin by
    plugin as ``db upgrade`` applies them. Blocking; raises what the driver raises when the
    database cannot be reached."""
    config = alembic_config(registry, database_url)
    script = ScriptDirectory.from_config(config)
    _tables, current = database_state(registry, database_url)
    since = tuple(sorted(current))
    # Each revision's place: its plugin's (by its folder), then its own in the branch.
    rank = {str(Path(m.path).resolve()): number for number, m in enumerate(registry.migrations)}
    found = _pending_scripts(script, _enabled_heads(script, registry), since)
    ranked = sorted(
        enumerate(found), key=lambda pair: (rank.get(str(Path(pair[1].path).parent.resolve()), len(rank)), pair[0])
    )
    return Pending(since=since, revisions=tuple(revision.revision for _number, revision in ranked))


def upgrade_sql(registry: Registry, since: tuple[str, ...], database_url: str | None = None) -> None:
    """Alembic's offline mode from the database's own revisions ``since`` (``db upgrade --sql``):
    the SQL of the pending migrations only, plugin by plugin as ``db upgrade`` applies them,
    written to stdout; nothing applied. Blocking.

    Alembic's ``start:end`` range takes one start revision, but a database here holds one per
    plugin's branch, and a branch's first revision depends on others (the schedule's on the
    catalog's): from one start, the others' migrations would be printed again, and the version
    table created once per plugin. So each plugin's pass starts from every revision the database
    holds by then (migrations/env.py hands back the version rows each pass leaves)."""
    config = alembic_config(registry, database_url)
    script = ScriptDirectory.from_config(config)
    heads = tuple(since)
    for plugin in dict.fromkeys(m.plugin for m in registry.migrations):
        target = (f"{plugin}@head",)
        if not _pending_scripts(script, target, heads):
            continue

        def steps(current: tuple[str, ...], _context: MigrationContext, target: tuple[str, ...] = target) -> list[Any]:
            found = _pending_scripts(script, target, tuple(current))
            return [MigrationStep.upgrade_from_script(script.revision_map, revision) for revision in found]

        with EnvironmentContext(config, script, fn=steps, as_sql=True, starting_rev=heads or None):
            script.run_env()
        heads = tuple(sorted(config.attributes["version_rows"]))


def database_state(registry: Registry, database_url: str | None = None) -> tuple[set[str], set[str]]:
    """The tables of the database and the migration revisions recorded in it. Blocking.

    ``campus-mcp db upgrade`` compares them before and after, to say what it did."""
    import asyncio

    from sqlalchemy import inspect, text

    from campus_mcp.db import make_engine

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
