"""``campus-mcp``: serve, run the scheduler, migrate, load the demo, inspect plugins and jobs.

Start-up loads only what the command needs (issue 14.7): this module imports click and nothing
heavy at the top, each command imports its own modules, the host's commands kept in other
modules (``token``, ``students``) load when asked for, and the plugins (with their commands, such
as the catalog's ``import``) load only for a command that is not the host's. So ``--help`` and
``plugins`` start without a plugin, the web stack, the database layer or the MCP SDK
(tests/cli/test_cli_startup.py; figures from bench/cli_startup.py in the README).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from campus_mcp.assembly.registry import Registry
    from campus_mcp.base.settings import Settings


def _registry() -> Registry:
    from pydantic import ValidationError

    from campus_mcp.assembly.registry import PluginError, load_registry
    from campus_mcp.base.settings import Settings, settings_problem

    try:
        return load_registry(Settings())
    except ValidationError as exc:
        raise click.ClickException(settings_problem(exc)) from None
    except PluginError as exc:
        raise click.ClickException(str(exc)) from None


# Long enough for a worker's start on a loaded machine; a hung worker is still replaced.
WORKER_HEALTHCHECK_SECONDS = 60


class StartupError(click.ClickException):
    """A setting that keeps ``serve`` from starting: one line saying what is wrong and what to do.

    Exit status 2, a configuration error, unlike 1 for a command that failed at its work."""

    exit_code = 2


def _log_to_stderr(settings: Settings) -> None:
    import logging

    from campus_mcp.cli.serving import log_to_stderr

    log_to_stderr(settings)
    # Alembic's INFO lines (its dialect, each script run) are not the server's; prepare_database says what it did.
    logging.getLogger("alembic").setLevel(logging.WARNING)


def _use_metrics_folder(overrides: dict[str, Any], workers: int = 1) -> None:
    from campus_mcp.cli.serving import use_metrics_folder

    use_metrics_folder(overrides, workers=workers)


def _say(settings: Settings, text: str, *, err: bool = False) -> None:
    """A long-running command's note: a line on the terminal, or a log line in a JSON log, whose
    every line must parse."""
    if settings.log_format == "json":
        import logging

        logging.getLogger("campus_mcp.cli.main").info(text)
    else:
        click.echo(text, err=err)


def _startup(overrides: dict[str, Any], *, check: Callable[[Settings], str | None] | None = None) -> Registry:
    """The settings, the seal key and the plugins ``serve`` needs, checked before anything is
    written (no database migrated by a server that then cannot start). ``check``: a command's own
    refusal, asked before the seal key (which may write a key file)."""
    from pydantic import ValidationError

    from campus_mcp.assembly.registry import PluginError, load_registry
    from campus_mcp.base.settings import Settings, settings_problem

    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        raise StartupError(settings_problem(exc)) from None
    if check is not None and (problem := check(settings)):
        raise StartupError(problem)
    try:
        # Outside demo mode a missing key, in demo mode a key file that is damaged or readable by others.
        settings.seal_key()
    except RuntimeError as exc:
        raise StartupError(str(exc)) from None
    except OSError as exc:
        raise StartupError(
            f"cannot read or make the demo mode's secret key in {settings.var_dir} ({exc.strerror}). "
            "Make the folder writable by this user (CAMPUS_MCP_VAR_DIR) or set CAMPUS_MCP_SECRET_KEY."
        ) from None
    from campus_mcp.assembly.icons import IconError, icons_of

    try:
        registry = load_registry(settings)
        icons_of(registry)  # an icon that cannot be read stops the start, not the first tools/list
    except (PluginError, IconError) as exc:
        raise StartupError(str(exc)) from None
    return registry


class CampusCommands(click.Group):
    """The host's commands, with those kept in other modules imported on use, and the enabled
    plugins' commands loaded only when a command is not the host's."""

    # name -> (module, attribute, the command's short help): listed by --help without the import.
    # tests/cli/test_cli_startup.py holds each short help to the command's own.
    elsewhere: ClassVar[dict[str, tuple[str, str, str]]] = {
        "token": (
            "campus_mcp.oauth.token_cli",
            "token",
            "Print a short-lived access token for a student (only the token, on stdout).",
        ),
        "audit": (
            "campus_mcp.students.cli",
            "audit",
            "Which app read or changed a student's data, when, through which tool or route (the access log).",
        ),
        "export": (
            "campus_mcp.students.cli",
            "export",
            "Everything the product holds about one student, as one JSON document (a records request).",
        ),
        # Registered by the core plugin's register_commands too; the same object either way.
        "students": (
            "campus_mcp.oauth.students_cli",
            "students",
            "Students: list, disable and enable any; local accounts (passwords hashed with argon2id).",
        ),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.elsewhere})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in self.elsewhere:
            import importlib

            module, attribute, _ = self.elsewhere[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
            return command
        # A plugin's command (an import) counts what it refused into the deployment's one metrics
        # folder, as `jobs run` does: set before the plugins load, which imports prometheus-client.
        _use_metrics_folder({})
        _plugin_commands(strict=True)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's listing, with the short help of a command not imported yet from the table.
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                rows.append((name, click.Command(name, help=self.elsewhere[name][2]).get_short_help_str(limit)))
            elif not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=CampusCommands,
    epilog=(
        "Enabled plugins add commands of their own, such as the catalog's `import`; "
        "`campus-mcp COMMAND --help` loads the plugins and shows one."
    ),
)
def main() -> None:
    """Campus MCP: campus data for AI assistants, as installable plugins."""


def _host_models() -> None:
    """Import every model of the host before a demo load: a reload clears the tables of the models
    imported in the process (campus_mcp.cli.demo.load_demo), and a command no longer imports them all by
    importing ``campus_mcp``."""
    import campus_mcp.jobs.scheduler
    import campus_mcp.mcp.answered_states
    import campus_mcp.mcp.confirmation_page
    import campus_mcp.mcp.idempotency
    import campus_mcp.oauth.accounts
    import campus_mcp.oauth.models
    import campus_mcp.oauth.personal_tokens  # noqa: F401


def prepare_database(
    registry: Registry, *, load_demo_if_empty: bool, notes_to_stderr: bool = False, migrate: bool = True
) -> None:
    """Migrations (unless ``migrate`` is off: a migration job does them), and the demo campus on
    first start. ``notes_to_stderr``: for ``stdio``, whose stdout carries only the protocol."""
    from campus_mcp.assembly.migrate import upgrade
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.cli.demo import load_demo, load_new_plugin_demos

    if migrate and (applied := upgrade(registry)):
        _say(registry.settings, f"Applied {len(applied)} migration(s).", err=notes_to_stderr)
    if load_demo_if_empty and registry.settings.demo:
        _host_models()

        async def _load() -> str | None:
            engine = make_engine(registry.settings.database_url)
            try:
                sessions = make_sessions(engine)
                if await load_demo(registry, sessions, reload=False):
                    return "Loaded the demo campus."
                # A plugin installed or enabled since the demo campus was loaded brings its demo data now.
                added = await load_new_plugin_demos(registry, sessions)
                return f"Loaded the demo data of {', '.join(added)}, new on this demo campus." if added else None
            finally:
                await engine.dispose()

        said = asyncio.run(_load())
        if said:
            _say(registry.settings, said, err=notes_to_stderr)


@main.command()
@click.option("--host", default=None, help="Address to listen on (default: CAMPUS_MCP_HOST or 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default: CAMPUS_MCP_PORT or 8000).")
@click.option("--no-prepare", is_flag=True, help="Skip migrations and the demo load.")
@click.option(
    "--no-migrate",
    is_flag=True,
    help="Skip migrations (a migration job runs `campus-mcp db upgrade`); refuse to start on an unmigrated database.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Server processes on this port (more than one needs PostgreSQL and CAMPUS_MCP_SECRET_KEY).",
)
def serve(host: str | None, port: int | None, no_prepare: bool, no_migrate: bool, workers: int) -> None:
    """Serve the MCP endpoint, the REST API and the pages (and take part in the scheduler election
    unless CAMPUS_MCP_SCHEDULER is off: one process of all runs the jobs)."""
    import os

    import uvicorn

    from campus_mcp.cli.serving import run_workers, several_processes_problem

    overrides: dict[str, Any] = {}
    if host:
        overrides["host"] = host
    if port:
        overrides["port"] = port
    _use_metrics_folder(overrides, workers)
    registry = _startup(overrides)
    settings = registry.settings
    if workers > 1 and (problem := several_processes_problem(settings, workers=workers, command="--workers")):
        raise StartupError(problem)
    _log_to_stderr(settings)
    if not settings.demo:
        _refuse_on_problems(registry, workers=workers, database=no_migrate)
    if not no_prepare:
        prepare_database(registry, load_demo_if_empty=True, migrate=not no_migrate)
    _say(settings, f"Serving {settings.product_name} on {settings.base_url} (MCP endpoint {settings.mcp_url})")
    # SIGTERM: uvicorn stops accepting, lets in-flight requests finish (up to the grace), then the
    # lifespan ends, which stops the scheduler and releases its lock.
    from campus_mcp.base.header_deadline import header_deadline

    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        # uvicorn's httptools protocol with a deadline for a request's headers (slowloris), and
        # its keep-alive timeout for an idle connection: no connection waits on a client for ever.
        "http": header_deadline(settings.http_header_timeout_seconds),
        "timeout_keep_alive": settings.http_keep_alive_seconds,
        "log_level": "info",
        "log_config": None,  # uvicorn's lines go to the root logger, in the log's one format (log_lines)
        "access_log": settings.access_log,  # no log line per request unless asked for
        "proxy_headers": False,
        "timeout_graceful_shutdown": settings.shutdown_grace_seconds,
        # uvicorn's supervisor kills a worker process that does not answer its ping within this,
        # and a new worker answers only once it has imported the host and the plugins: longer than
        # uvicorn's 5 s on a busy machine, where every worker was killed and started again for ever.
        "timeout_worker_healthcheck": WORKER_HEALTHCHECK_SECONDS,
    }
    if workers == 1:
        from campus_mcp.cli.serving import served
        from campus_mcp.web.app import create_app

        uvicorn.run(served(create_app(registry=registry), settings), **options)
        return
    # Each worker process builds its own app from the settings, so the options given here go to
    # them through the environment they inherit.
    os.environ["CAMPUS_MCP_HOST"], os.environ["CAMPUS_MCP_PORT"] = settings.host, str(settings.port)
    # One /metrics for all of them: prometheus-client's multiprocess folder, emptied of an earlier start.
    from campus_mcp.base.metrics import share_between_workers

    share_between_workers(settings)
    # uvicorn's supervisor, except that a SIGTERM also closes its listening socket (serving.py).
    run_workers(workers, options, registry)


def unnamed_database_problem(settings: Settings) -> str | None:
    """Why ``stdio`` will not start on the default database: a desktop client chooses the working
    folder, so the default relative SQLite file would be a new, empty demo campus there, on which
    the student's token is then unknown. A database named in the settings, or one already there,
    is used."""
    from sqlalchemy.engine import make_url

    if "database_url" in settings.model_fields_set:
        return None
    url = make_url(settings.database_url)
    if not url.get_backend_name().startswith("sqlite") or not url.database:
        return None
    path = Path(url.database).absolute()
    if path.exists():
        return None
    return (
        f"campus-mcp stdio was not given a database and will not create one at {path}: set "
        "CAMPUS_MCP_DATABASE_URL to the database of the campus-mcp serve whose dashboard made your "
        "token (for SQLite, an absolute path: sqlite+aiosqlite:////path/to/campus-mcp/var/campus.db)."
    )


def _refuse_on_problems(registry: Registry, *, workers: int, database: bool) -> None:
    """``campus-mcp check``'s checks before ``serve`` outside demo mode (not the database's: serve
    migrates it or finds it unreachable itself); an error stops it, a note is one INFO line. A
    note describes a configuration that may well be meant (a scraper on this machine only): as a
    WARNING at every start it taught operators to skim past the warnings that matter."""
    import logging

    from campus_mcp.cli.check import all_problems

    found = all_problems(registry, workers=workers, database=database)
    for problem in found:
        if problem.level == "note":
            logging.getLogger("campus_mcp.check").info("%s", problem.text)
    errors = [problem.text for problem in found if problem.level == "error"]
    if errors:
        raise StartupError(" ".join(errors) + " (`campus-mcp check` lists every problem.)")


@main.command()
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="The server processes the configuration is for (serve's --workers, or all machines' together).",
)
def check(workers: int) -> None:
    """Check a production configuration before it serves: one line per problem with its fix; exit 1 on an error."""
    from campus_mcp.cli.check import all_problems

    found = all_problems(_registry(), workers=workers, redis=True)
    for problem in found:
        click.echo(str(problem))
    errors = sum(problem.level == "error" for problem in found)
    if errors:
        click.echo(f"{errors} error(s): correct them and run `campus-mcp check` again.", err=True)
        sys.exit(1)
    click.echo("The configuration is ready to serve.")


@main.command()
@click.option("--no-prepare", is_flag=True, help="Skip migrations and the demo load.")
def stdio(no_prepare: bool) -> None:
    """Serve MCP over stdin/stdout for a desktop client, as the student of CAMPUS_MCP_TOKEN."""
    from campus_mcp.cli.stdio import StdioRefused, run

    registry = _startup({}, check=unnamed_database_problem)
    _log_to_stderr(registry.settings)  # stderr only: stdout carries the protocol
    if not no_prepare:
        prepare_database(registry, load_demo_if_empty=True, notes_to_stderr=True)
    try:
        run(registry)
    except StdioRefused as exc:
        raise StartupError(str(exc)) from None
    except KeyboardInterrupt:
        pass


@main.command()
def worker() -> None:
    """Run only the job scheduler: a standby until it wins the scheduler election (one scheduler
    across every serve and worker process); SIGTERM or Ctrl-C stops it and releases the lock."""
    import signal

    # First: prometheus-client picks its mode (CAMPUS_MCP_METRICS_DIR's folder, or this process
    # alone) when it is imported, and campus_mcp.jobs.scheduler imports it. Imported before, the worker counted
    # its job runs in its own memory, which no /metrics read.
    _use_metrics_folder({})
    from campus_mcp.assembly.deployment import Deployment
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.cli.serving import several_processes_problem
    from campus_mcp.jobs.scheduler import scheduler_election
    from campus_mcp.jobs.worker_metrics import MetricsPortUnusable, metrics_socket, served_worker_metrics

    registry = _startup({})
    if problem := several_processes_problem(registry.settings, workers=1, command="campus-mcp worker"):
        raise StartupError(problem)
    settings = registry.settings
    _log_to_stderr(settings)
    try:
        sock = metrics_socket(settings)  # CAMPUS_MCP_WORKER_METRICS_PORT: its own /metrics (worker_metrics)
    except MetricsPortUnusable as exc:
        raise StartupError(str(exc)) from None

    async def _run() -> None:
        engine = make_engine(settings.database_url, timeout_seconds=settings.database_timeout_seconds)
        sessions = make_sessions(engine)
        election = scheduler_election(registry, sessions, name="worker")
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopping.set)
        deployment = Deployment(registry=registry, engine=engine, sessions=sessions)
        try:
            async with served_worker_metrics(deployment, sock):
                election.start()
                metrics_words = (
                    f" Its metrics: http://{settings.host}:{settings.worker_metrics_port}/metrics." if sock else ""
                )
                _say(
                    settings,
                    f"Worker for {len(registry.jobs)} job(s): the scheduler runs here while this process holds "
                    f"the scheduler lock; SIGTERM or Ctrl-C stops it.{metrics_words}",
                )
                try:
                    await stopping.wait()
                finally:
                    await election.stop()
        finally:
            await engine.dispose()

    asyncio.run(_run())


@main.group()
def db() -> None:
    """Database commands."""


@db.command("upgrade")
@click.option(
    "--sql",
    is_flag=True,
    help="Print the SQL of the migrations the database has not had (from its own revisions); apply nothing.",
)
def db_upgrade(sql: bool) -> None:
    """Apply the migrations of every enabled plugin."""
    from campus_mcp.assembly.migrate import database_state, upgrade

    registry = _registry()
    if sql and not registry.settings.database_url.startswith("postgresql"):
        # Some migrations read a SQLite database to decide (its statistics): no SQL without one.
        raise click.ClickException(
            "--sql writes PostgreSQL's SQL for a database administrator; set CAMPUS_MCP_DATABASE_URL to "
            "the PostgreSQL database. A SQLite database is upgraded with `campus-mcp db upgrade` (back up the file first)."
        )
    if sql:
        _pending_sql(registry)
        return
    tables, _revisions = database_state(registry)
    # The revisions this process applied: with several upgrading at once, the others applied none.
    applied = upgrade(registry)
    if not applied:
        click.echo("The database was already up to date: no migration to apply.")
        return
    tables_after, _revisions = database_state(registry)
    created = len(tables_after - tables - {"alembic_version"})
    plugins = ", ".join(dict.fromkeys(m.plugin for m in registry.migrations))
    made = f"created {created} table{'s' * (created != 1)}" if created else "changed existing tables"
    count = f"applied {len(applied)} migration{'s' * (len(applied) != 1)}"
    click.echo(f"Migrated the database ({plugins}): {count}, {made}. It is now up to date.")


def _pending_sql(registry: Registry) -> None:
    """``db upgrade --sql``: the SQL of what is pending since the database's own revisions, for a
    database administrator to review and run. stdout is SQL alone (the heading is a comment); a
    database with nothing pending prints no SQL and says so on stderr."""
    from campus_mcp.assembly.migrate import pending, upgrade_sql

    try:
        found = pending(registry)
    except Exception as exc:  # the database cannot be reached or read: one line, never its URL
        raise click.ClickException(
            f"--sql reads the database's revisions first and could not ({type(exc).__name__}). Check "
            "CAMPUS_MCP_DATABASE_URL (the host, the user and its password, the database name) and that the server runs."
        ) from None
    since = ", ".join(found.since) or "none: an empty database"
    if not found.revisions:
        click.echo(f"The database is up to date (at {since}): no migration is pending, so there is no SQL.", err=True)
        return
    count = f"{len(found.revisions)} migration{'s' * (len(found.revisions) != 1)}"
    click.echo(f"-- Campus MCP: the {count} pending since the database's revisions ({since}):")
    click.echo(f"-- {', '.join(found.revisions)}.")
    upgrade_sql(registry, found.since)
    click.echo(f"The SQL of {count} is on stdout; nothing was applied.", err=True)


@db.command("current")
def db_current() -> None:
    """The revision the database is at, for each plugin's branch."""
    from campus_mcp.assembly.migrate import current

    lines = current(_registry())
    click.echo("\n".join(lines) if lines else "No migration applied: the database is empty (campus-mcp db upgrade).")


@db.command("history")
def db_history() -> None:
    """Every migration of the installed plugins, newest first."""
    from campus_mcp.assembly.migrate import history

    click.echo("\n".join(history(_registry())))


@main.command()
@click.option("--scale", default=1, show_default=True, type=int, help="Multiply the demo campus (benchmarks).")
def demo(scale: int) -> None:
    """Load (or reload) the demo campus."""
    from campus_mcp.assembly.migrate import upgrade
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.cli.demo import load_demo

    registry = _registry()
    upgrade(registry)
    _host_models()

    async def _load() -> None:
        engine = make_engine(registry.settings.database_url)
        try:
            await load_demo(registry, make_sessions(engine), scale=scale, reload=True)
        finally:
            await engine.dispose()

    asyncio.run(_load())
    click.echo(f"Loaded the demo campus at scale {scale}.")


def plugins_report(registry: Registry) -> list[dict[str, Any]]:
    report = []
    for name, info in registry.plugins.items():
        report.append(
            {
                "name": name,
                "version": info.version,
                "title": info.title,
                "depends_on": list(info.depends_on),
                "hooks": registry.hooks_of(name) if registry.pm.get_plugin(name) else [],
                **registry.contributions_of(name),
                "routes": _routes_of(registry, name),
            }
        )
    return report


def _routes_of(registry: Registry, plugin: str) -> list[str]:
    from campus_mcp.web.app import plugin_routers

    routes: list[str] = []
    for router in plugin_routers(registry):
        if router.opt.get("campus_plugin") != plugin:
            continue
        for route in router.routes:
            for method in sorted(getattr(route, "methods", ()) or ()):
                if method not in ("HEAD", "OPTIONS"):
                    routes.append(f"{method} {route.path}")
    return sorted(set(routes))


def installed_plugins() -> list[dict[str, Any]]:
    """Every installed plugin from its entry point's metadata, none imported: its name, its
    distribution's version, and whether the allow and block lists enable it (and if not, which)."""
    from importlib.metadata import entry_points

    from pydantic import ValidationError

    from campus_mcp.assembly.registry import (
        BUILTIN_PLUGINS,
        ENTRY_POINT_GROUP,
        PluginError,
        check_plugin_names,
        example_left_out,
    )
    from campus_mcp.base.settings import Settings, settings_problem
    from campus_mcp.version import __version__

    try:
        settings = Settings()
        entries = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: entry.name)
        check_plugin_names(settings, [entry.name for entry in entries])
    except ValidationError as exc:
        raise click.ClickException(settings_problem(exc)) from None
    except PluginError as exc:
        raise click.ClickException(str(exc)) from None
    listed: list[dict[str, Any]] = [
        {"name": module.rsplit(".", 1)[-1], "version": __version__, "distribution": "campus-mcp", "enabled": True}
        for module in BUILTIN_PLUGINS
    ]
    for entry in entries:
        plugin: dict[str, Any] = {
            "name": entry.name,
            "version": entry.dist.version if entry.dist else None,
            "distribution": entry.dist.name if entry.dist else None,
            "enabled": True,
        }
        if settings.plugins is not None and entry.name not in settings.plugins:
            plugin |= {"enabled": False, "disabled_by": "CAMPUS_MCP_PLUGINS (not in the allow list)"}
        elif entry.name in settings.disable:
            plugin |= {"enabled": False, "disabled_by": "CAMPUS_MCP_DISABLE"}
        elif example_left_out(settings, entry):
            plugin |= {"enabled": False, "disabled_by": "an example: name it in CAMPUS_MCP_PLUGINS outside demo mode"}
        listed.append(plugin)
    _mark_missing_needs(listed, entries)
    return listed


def _distribution_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _mark_missing_needs(listed: list[dict[str, Any]], entries: Any) -> None:
    """An enabled plugin whose distribution requires another plugin's distribution that these
    settings disable cannot start (``load_registry`` refuses it): say so beside ``enabled``, from
    the metadata alone (no plugin imported)."""
    plugin_of = {_distribution_key(entry.dist.name): entry.name for entry in entries if entry.dist}
    by_name = {plugin["name"]: plugin for plugin in listed}
    for entry in entries:
        plugin = by_name[entry.name]
        if not plugin["enabled"] or entry.dist is None:
            continue
        for requirement in entry.dist.requires or ():
            found = re.match(r"[A-Za-z0-9._-]+", requirement)
            needed = plugin_of.get(_distribution_key(found.group(0))) if found else None
            if needed and not by_name[needed]["enabled"]:
                plugin["cannot_start"] = (
                    f"plugin '{entry.name}' needs plugin '{needed}', which {by_name[needed]['disabled_by']} "
                    f"turns off: enable '{needed}' or disable '{entry.name}' too"
                )
                break


@main.command()
@click.option(
    "--contributions",
    is_flag=True,
    help="Load the enabled plugins and print what each contributes: title, dependencies, hooks, "
    "tools, scopes, prompts, jobs, views and routes.",
)
def plugins(contributions: bool) -> None:
    """Print the installed plugins as JSON: name, version, enabled (read from their metadata)."""
    if contributions:
        # Only the plugin's own code knows its hooks and contributions, and only the app its
        # routes' paths: this loads every enabled plugin (and checks their dependencies).
        click.echo(json.dumps(plugins_report(_registry()), indent=2))
    else:
        listed = installed_plugins()
        click.echo(json.dumps(listed, indent=2))
        for plugin in listed:
            if "cannot_start" in plugin:
                click.echo(f"These settings cannot start: {plugin['cannot_start']}.", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
def parity(as_json: bool) -> None:
    """Check that every REST route of every plugin has its MCP tool."""
    from campus_mcp.assembly.parity import check_parity
    from campus_mcp.web.app import create_app

    registry = _registry()
    report = check_parity(create_app(registry=registry, run_scheduler=False), registry)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(
            f"{len(report.routes)} routes, {len(report.covered)} mirrored by tools, "
            f"{len(report.exempt)} exempt, {len(report.pending)} pending."
        )
        for problem in report.problems:
            click.echo(f"  FAIL {problem}")
    if not report.ok:
        sys.exit(1)


@main.command("new-plugin")
@click.argument("name")
@click.option(
    "--dir",
    "folder",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write it into, new or empty (default: ./campus-mcp-NAME).",
)
def new_plugin(name: str, folder: Path | None) -> None:
    """Write a working plugin distribution NAME: table, migration, query, route, tool, demo data, tests."""
    from campus_mcp.assembly.registry import installed_plugin_names
    from campus_mcp.cli.scaffold import PluginNames, ScaffoldError, write_plugin

    target = folder or Path("campus-mcp-" + name.replace("_", "-"))
    try:
        written = write_plugin(name, target, installed_plugin_names())
    except ScaffoldError as exc:
        raise click.ClickException(str(exc)) from None
    names = PluginNames(name).placeholders()
    click.echo(f"Wrote the plugin {name!r} ({len(written)} files) into {target}. Next:")
    click.echo(f"  pip install -e '{target}[test]'     # into the virtualenv campus-mcp runs from")
    click.echo(f"  cd {target} && pytest            # its tests and the kit's contract")
    click.echo(f"  campus-mcp plugins; campus-mcp parity; campus-mcp serve   # tool {names['tool']}")
    click.echo("Then grow it with docs/plugin-authoring.md.")


@main.group()
def jobs() -> None:
    """Scheduled jobs."""


@jobs.command("list")
def jobs_list() -> None:
    """List the jobs with their triggers, and the recent runs with what they lost."""
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.jobs.scheduler import recent_runs, trigger_for

    registry = _registry()
    zone = registry.settings.timezone
    for job in registry.jobs.values():
        click.echo(f"{job.id:40} {job.plugin:10} {trigger_for(job, zone)}  {job.description}")

    async def _runs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        engine = make_engine(registry.settings.database_url)
        try:
            async with make_sessions(engine)() as session:
                scheduled = await recent_runs(session, registry.jobs, zone)
                other = await recent_runs(session, registry.jobs, zone, jobs=False, limit=20)
                return scheduled, other
        finally:
            await engine.dispose()

    # Only the jobs above, which `jobs run` can start; work recorded outside the scheduler (a
    # refresh a tool asked for, an import) comes apart, saying so, with what it lost.
    scheduled, other = asyncio.run(_runs())
    for heading, runs in (
        ("Recent runs:", scheduled),
        ("Recorded outside the scheduler (not jobs; `jobs run` cannot start these):", other),
    ):
        if runs:
            click.echo(f"\n{heading}")
        for run in runs:
            click.echo(_run_line(run))


def _run_line(run: dict[str, Any]) -> str:
    # What a run lost and its error quote the upstream's data and messages: escaped, one line a run.
    from campus_mcp.base.logsafe import cell

    lost = (
        f", lost {len(run['lost'])}: " + "; ".join(f"{cell(k)}: {cell(v)}" for k, v in list(run["lost"].items())[:5])
        if run["lost"]
        else ""
    )
    error = f", error: {cell(run['error'])}" if run["error"] else ""
    return f"  {run['started_at']} {run['job']:40} {run['outcome']:8} items {run['items']}{lost}{error}"


@jobs.command("run")
@click.argument("job_id")
def jobs_run(job_id: str) -> None:
    """Run one job now and record the run."""
    _use_metrics_folder({})  # before the job's modules import prometheus-client
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.jobs.scheduler import record_abandoned_runs, run_job

    registry = _registry()
    _log_to_stderr(registry.settings)  # the job's own lines, in the log's format
    job = registry.jobs.get(job_id)
    if job is None:
        raise click.ClickException(
            f"no job {job_id!r}; `campus-mcp jobs list` shows the jobs: {', '.join(registry.jobs) or 'none'}"
        )

    async def _run() -> Any:
        engine = make_engine(registry.settings.database_url)
        try:
            sessions = make_sessions(engine)
            async with sessions() as session:
                # A run this machine's killed process left at "running" is recorded as abandoned.
                await record_abandoned_runs(session, as_scheduler=False)
            return await run_job(job, registry, sessions)
        finally:
            await engine.dispose()

    run = asyncio.run(_run())
    click.echo(f"{job_id}: {run.outcome}, {run.items} item(s){', error: ' + run.error if run.error else ''}")
    if run.outcome == "failed":
        sys.exit(1)


def _plugin_commands(*, strict: bool = False) -> None:
    """Add the commands the enabled plugins register (``campus-mcp import ...``).

    ``strict``: a plugin set or settings that cannot load is the error to show (the command asked
    for may be a plugin's); otherwise such a command is left out in silence, and the commands that
    need the settings or the registry report the error themselves."""
    from pydantic import ValidationError

    from campus_mcp.assembly.registry import PluginError, load_registry
    from campus_mcp.base.settings import Settings, settings_problem

    try:
        registry = load_registry(Settings())
    except ValidationError as exc:
        if strict:
            raise click.ClickException(settings_problem(exc)) from None
        return
    except PluginError as exc:
        if strict:
            raise click.ClickException(f"{exc} (the plugins load for a command that is not the host's)") from None
        return
    for command in registry.commands:
        existing = main.commands.get(command.name or "")
        if existing is None and command.name in CampusCommands.elsewhere:
            existing = main.get_command(click.Context(main), command.name)
        if existing is not None and existing is not command:
            # click would silently replace it: a plugin must never swap out `serve` or `db`.
            click.echo(
                f"campus-mcp: a plugin's command {command.name!r} has the name of another command; "
                "it is left out. Rename it.",
                err=True,
            )
            continue
        main.add_command(command)


def every_command() -> dict[str, click.Command]:
    """Every command, the plugins' too, each imported (the README's command table is checked by it)."""
    _plugin_commands(strict=True)
    context = click.Context(main)
    return {name: command for name in main.list_commands(context) if (command := main.get_command(context, name))}
