"""``campus-mcp serve`` as a real subprocess on loopback, for end-to-end tests (the kit's ``serve``).

A subprocess rather than an in-process server: the test sees what a user's ``campus-mcp serve``
does (migrations, the demo load, uvicorn, the command's own logging), and a server frozen by a
hostile request can still be killed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import httpx
import pytest

from campus_mcp.testing.oauth import free_port

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0
# How much of the server's output a failure shows: the end, where the reason is.
LOG_TAIL_CHARS = 3000


@dataclasses.dataclass(frozen=True)
class ServedCampus:
    """A running ``campus-mcp serve``: where it answers, and the file its output goes to."""

    base: str
    log: Path

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/api/mcp"


@contextlib.contextmanager
def serve(
    env: Mapping[str, str],
    *,
    log_path: Path,
    args: Sequence[str] = (),
    port: int | None = None,
    start_timeout_s: float = START_TIMEOUT_S,
    stop_timeout_s: float = STOP_TIMEOUT_S,
) -> Iterator[ServedCampus]:
    """Run ``campus-mcp serve`` on 127.0.0.1 until the block ends; yields once ``/healthz`` answers 200.

    The server gets this process's environment without its ``CAMPUS_MCP_`` variables (a
    developer's own settings must not leak into a test), plus ``env``. Its output goes to
    ``log_path``; if it exits or does not answer within ``start_timeout_s`` the test fails with the
    end of that output. ``args`` are more options of ``serve`` (``["--no-prepare"]``). At the end it
    gets SIGINT, and is killed if it has not stopped within ``stop_timeout_s``.
    """
    port = free_port() if port is None else port
    base = f"http://127.0.0.1:{port}"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("CAMPUS_MCP_")}
    environment.update(env)
    # The console script of the interpreter running the tests: the virtualenv's own campus-mcp.
    command = [str(Path(sys.executable).parent / "campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log_path.open("wb") as log:
        # The virtualenv's own console script with the test's arguments, never a shell.
        process = subprocess.Popen(  # noqa: S603
            [*command, *args], env=environment, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        try:
            _wait_until_healthy(process, base, log_path, start_timeout_s)
            yield ServedCampus(base=base, log=log_path)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=stop_timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_healthy(process: subprocess.Popen[bytes], base: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            pytest.fail(f"campus-mcp serve exited with {process.returncode}:\n{_tail(log_path)}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"campus-mcp serve did not answer in {timeout_s:g}s:\n{_tail(log_path)}")
        time.sleep(0.2)


def _tail(log_path: Path) -> str:
    return log_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]


@contextlib.contextmanager
def private_redis(folder: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A ``redis-server`` of the test's own on a free loopback port, with no persistence, until the
    block ends; yields its URL and its process (a test of a Redis fault stops it).

    Skips without ``redis-server`` on the machine, except under ``CI=true``: CI installs it
    (``.ci/run``), so a missing one there is a failure, not a silent skip.
    """
    import shutil
    import socket

    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must have redis-server (.ci/run installs it): a Redis test cannot skip there")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    # The machine's own redis-server with fixed arguments, never a shell.
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", process
    finally:
        process.terminate()
        process.wait(timeout=10)
