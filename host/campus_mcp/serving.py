"""Serving with several processes: what ``serve --workers N`` and ``worker`` check, and the app
factory each uvicorn worker process calls.

Each worker process builds its own app (``app_for_worker``), so each has its own lifespan: its own
database pool, its own MCP session manager, its own place in the scheduler election
(``campus_mcp.leader``). uvicorn's supervisor restarts a worker that dies and, on SIGTERM, passes
it on to every worker, each of which finishes its in-flight requests and releases the scheduler
lock if it held it.

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

import logging
from typing import TYPE_CHECKING

from campus_mcp.settings import Settings

if TYPE_CHECKING:
    from litestar import Litestar

MAKE_A_KEY = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


def log_to_stderr() -> None:
    """INFO and up of every logger (the host's, the plugins', the scheduler's) on stderr, for the
    long-running commands. basicConfig leaves a root logger the operator set up alone."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s - %(asctime)s - %(name)s - %(message)s")


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


def app_for_worker() -> Litestar:
    """The app of one uvicorn worker process, from the settings the parent checked (its environment)."""
    from campus_mcp.app import create_app
    from campus_mcp.registry import load_registry

    log_to_stderr()
    return create_app(registry=load_registry(Settings()))
