"""Serving with several processes: what ``serve --workers N`` and ``worker`` check, and the app
factory each uvicorn worker process calls.

Each worker process builds its own app (``app_for_worker``), so each has its own lifespan: its own
database pool, its own MCP session manager, its own place in the scheduler election
(``campus_mcp.leader``). uvicorn's supervisor restarts a worker that dies and, on SIGTERM, passes
it on to every worker, each of which finishes its in-flight requests and releases the scheduler
lock if it held it, and closes the listening socket, so a new connection is refused at once.

What must agree across workers and machines comes from the settings, never from one process:

- ``CAMPUS_MCP_SECRET_KEY`` (``Settings.seal_key``): seals ``requestState`` (mcp_server.py: a
  confirmation asked by one worker is answered by another); derived from it, the key that signs
  the dashboard's session cookie (oauth/session.py) and the pepper of personal access token
  hashes (oauth/personal_tokens.py). The demo mode's generated key is one machine's file, so
  more than one worker, or any ``worker``, refuses it.
- ``CAMPUS_MCP_OIDC_CLIENT_SECRET`` and ``CAMPUS_MCP_METRICS_TOKEN``: plain settings.
- Everything else shared lives in the database: OAuth clients, codes and tokens (stored as
  SHA-256 hashes, no pepper), confirmations, sign-in sessions' generations, job runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from uvicorn.supervisors import Multiprocess

from campus_mcp.settings import Settings

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.types import ASGIApp

    from campus_mcp.registry import Registry

MAKE_A_KEY = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


def log_to_stderr(settings: Settings) -> None:
    """INFO and up of every logger (the host's, the plugins', the scheduler's, uvicorn's) on stderr
    in one format, for the long-running commands (campus_mcp.log_lines). A root logger the
    operator set up is left alone."""
    from campus_mcp.log_lines import configure

    configure(settings.log_format, access_log=settings.access_log)


def use_metrics_folder(overrides: Mapping[str, Any], *, workers: int = 1) -> None:
    """Put ``CAMPUS_MCP_METRICS_DIR`` in ``PROMETHEUS_MULTIPROC_DIR`` before prometheus-client is
    imported (it picks its mode on import), so serve, its workers, ``worker`` and ``jobs run``
    all count into one folder. A folder the operator set in PROMETHEUS_MULTIPROC_DIR wins; settings
    that do not validate are left for the command's own check to report.

    ``serve --workers N`` with forked workers (campus_mcp.speedups.forked_workers) uses its own
    folder (metrics.share_between_workers) from here already: a forked worker inherits the
    supervisor's prometheus-client, mode and all, where a spawned one imports it afresh."""
    import os
    from pathlib import Path

    from pydantic import ValidationError

    from campus_mcp.speedups import Switches

    try:
        settings = Settings(**overrides)
    except ValidationError:
        return
    folder = settings.metrics_dir
    if not folder and workers > 1 and Switches.of(settings).forked_workers:
        folder = str(Path(settings.var_dir) / f"metrics-{settings.port}")  # metrics.share_between_workers' own
    if folder and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        path = Path(folder).resolve()
        path.mkdir(parents=True, exist_ok=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)


def several_processes_problem(settings: Settings, *, workers: int, command: str) -> str | None:
    """Why ``command`` (``serve --workers N`` or ``worker``) cannot run on these settings, or None."""
    if workers > 1 and not settings.database_url.startswith("postgresql"):
        return (
            f"{command} needs PostgreSQL: several workers share one database, and SQLite lets one "
            "process write at a time. Set CAMPUS_MCP_DATABASE_URL=postgresql+asyncpg://USER@HOST/DB, "
            "or serve with one worker."
        )
    if settings.key_is_generated:
        return (
            f"{command} needs CAMPUS_MCP_SECRET_KEY: every process must seal confirmations and sign "
            "sessions with the same key, and the demo mode's generated key belongs to one machine. "
            f"Set it to one long random value on every worker and machine, for example: {MAKE_A_KEY}"
        )
    return None


def run_workers(workers: int, options: Mapping[str, Any], registry: Registry) -> None:
    """uvicorn with ``workers`` processes of :func:`app_for_worker` on one listening socket, under
    :class:`_Supervisor`; ``options`` are ``uvicorn.Config``'s. The workers are forked from this
    process once it loaded what they load (``registry``'s plugins, an app), or with the switch
    off spawned as uvicorn does (campus_mcp.speedups.forked_workers)."""
    import uvicorn

    from campus_mcp.speedups import Switches, forked_workers

    config = uvicorn.Config("campus_mcp.serving:app_for_worker", factory=True, workers=workers, **options)
    supervisor = _Supervisor(config, sockets=[config.bind_socket()])
    if not forked_workers.forking(Switches.of(registry.settings).forked_workers):
        supervisor.run()
        return
    forked_workers.preload(registry)
    with forked_workers.forked_workers():
        supervisor.run()


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, which also lets go of the listening socket when it stops the workers.

    The workers share the parent's listening socket. On SIGTERM each worker closes its own copy and
    finishes its requests, but uvicorn's parent keeps its copy open until every worker has exited,
    so for the whole grace the kernel still accepted new connections into a backlog nobody reads:
    a client (or a load balancer) hung until the end instead of being refused at once and trying
    another server. Closing the parent's copy once the workers are told to stop closes the socket.
    """

    def terminate_all(self) -> None:
        super().terminate_all()
        # Only reached on the way out (a restart replaces workers one by one, never through here).
        for sock in self.sockets:
            sock.close()


def served(app: Litestar, settings: Settings) -> ASGIApp:
    """``app`` as ``serve`` runs it: each request with its id (campus_mcp.request_ids)."""
    from campus_mcp.limits.policy import networks
    from campus_mcp.request_ids import with_request_ids

    return with_request_ids(app, networks(settings.trusted_proxies, "CAMPUS_MCP_TRUSTED_PROXIES"))


def app_for_worker() -> ASGIApp:
    """The app of one uvicorn worker process, from the settings the parent checked (its environment)."""
    from campus_mcp.app import create_app
    from campus_mcp.registry import load_registry

    settings = Settings()
    log_to_stderr(settings)
    return served(create_app(registry=load_registry(settings)), settings)
