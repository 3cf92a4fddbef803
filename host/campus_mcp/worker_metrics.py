"""``campus-mcp worker``'s own ``/metrics``, for a worker whose metrics folder no ``serve`` reads.

On one machine, ``serve`` and ``worker`` share ``CAMPUS_MCP_METRICS_DIR`` and the worker's job
counts are on serve's ``/metrics``. A worker in a container of its own (compose, Kubernetes) writes
them into a folder nothing serves, so they never reached Prometheus (issue 35). Sharing that folder
with the web replicas would not do: each replica's ``/metrics`` sums every file of its folder, so
every replica would report the worker's runs and Prometheus, summing the replicas, would count each
run as often as there are replicas. So the worker is a target of its own: with
``CAMPUS_MCP_WORKER_METRICS_PORT`` it serves ``/metrics`` (every process of its folder, as serve's
does) and ``/healthz`` on ``CAMPUS_MCP_HOST``, behind serve's own guard (the token, or an allowed
address naming an allowed ``Host``) and its header deadline, and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import uvicorn
from litestar import Litestar, MediaType, get
from litestar.datastructures import State

from campus_mcp import metrics
from campus_mcp.deployment import Deployment
from campus_mcp.header_deadline import header_deadline
from campus_mcp.settings import Settings


@get("/healthz", media_type=MediaType.JSON)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/metrics", media_type=metrics.CONTENT_TYPE, guards=[metrics.metrics_guard])
async def metrics_page() -> str:
    return metrics.render()


def metrics_app(deployment: Deployment) -> Litestar:
    """The worker's two routes; the guard reads the settings from ``state.deployment`` as serve's does."""
    return Litestar([healthz, metrics_page], state=State({"deployment": deployment}), openapi_config=None)


class MetricsPortUnusable(Exception):
    """The worker's metrics port cannot be listened on; the text names the setting."""


def metrics_socket(settings: Settings) -> socket.socket | None:
    """The worker's metrics socket, bound before anything else starts (uvicorn, failing to bind,
    would exit from inside its task), or None with no port set."""
    host, port = settings.host, settings.worker_metrics_port
    if not port:
        return None
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise MetricsPortUnusable(
            f"campus-mcp worker cannot serve its metrics on {host}:{port} ({exc.strerror}): choose another "
            "CAMPUS_MCP_WORKER_METRICS_PORT, or 0 for none."
        ) from None
    return sock


@contextlib.asynccontextmanager
async def served_worker_metrics(deployment: Deployment, sock: socket.socket | None) -> AsyncIterator[None]:
    """Serve the worker's metrics on ``sock`` (:func:`metrics_socket`) while the block runs."""
    if sock is None:
        yield
        return
    settings = deployment.settings
    config = uvicorn.Config(
        metrics_app(deployment),
        http=header_deadline(settings.http_header_timeout_seconds),
        timeout_keep_alive=settings.http_keep_alive_seconds,
        log_config=None,  # its lines, if any, in the log's one format (log_lines)
        access_log=settings.access_log,
        lifespan="off",
        proxy_headers=False,
    )
    server = uvicorn.Server(config)
    # The worker owns SIGTERM and SIGINT (they stop the scheduler first): uvicorn must not take them.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        # uvicorn says it is listening by a flag, not an event: looked at every 10 ms until then.
        while not server.started and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if task.done():
            task.result()  # its error, if it had one
        yield
    finally:
        server.should_exit = True
        await task
        sock.close()
