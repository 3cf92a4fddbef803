"""``serve --workers 2`` starts its workers on a machine where a new worker process takes longer
than 5 seconds to come up (issue 15.3, found by the soak of bench/soak.py).

uvicorn's supervisor pings every worker process each half second and kills one that has not
answered within ``timeout_worker_healthcheck`` (5 s by default); a new worker can answer only once
it has imported the host and its plugins, which takes longer than that on a busy machine. Every
worker was then killed before it served and started again, for ever ("Child process [N] died").
Here each worker is held back 8 s before it starts (a ``sitecustomize`` on its PYTHONPATH that
sleeps in multiprocessing's spawned children only), so the test does not depend on how busy the
machine is.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from campus_mcp.testing import TestDatabases, serve

SLOW_START = """\
import sys, time

if "--multiprocessing-fork" in sys.argv:  # uvicorn's worker processes, not the supervisor
    time.sleep(8)
"""


async def test_two_workers_start_when_each_takes_longer_than_5_seconds(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    if not campus_databases.postgres:
        pytest.skip("serve --workers needs PostgreSQL: set CAMPUS_MCP_TEST_DATABASE_URL")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START)
    database = await campus_databases.empty()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database,
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key-of-two-workers",
        # Spawned workers, which the sitecustomize holds back: forked ones (the default since issue 36,
        # campus_mcp.cli.forked_workers) never start a fresh interpreter to run it.
        "CAMPUS_MCP_FORKED_WORKERS": "false",
        "PYTHONPATH": str(site),
    }
    log = tmp_path / "serve.log"
    try:
        # /healthz touches no table, so an empty database and --no-prepare keep the test short.
        with serve(env, log_path=log, args=["--no-prepare", "--workers", "2"], start_timeout_s=90):
            # serve() yields once /healthz answers; wait for the other worker too.
            deadline = time.monotonic() + 60
            while log.read_text(errors="replace").count("Application startup complete") < 2:
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
                await asyncio.sleep(0.5)
            text = log.read_text(errors="replace")
            # A killed worker is started again, so serving alone proves nothing: none may have died.
            assert "died" not in text, text[-2000:]
    finally:
        await campus_databases.drop(database)
