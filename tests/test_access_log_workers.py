"""``CAMPUS_MCP_ACCESS_LOG`` holds with several workers (issue 35, point 4): a real
``campus-mcp serve --workers 2`` writes no per-request line with it off (the default), and one per
request with it on.

Before, each worker set up uvicorn's logging and then the product's (log_lines), which passed
uvicorn's access logger on to the root logger again: 1,464 lines for 1,068 requests with the
setting off. One worker (``serve`` alone) was right, so only the workers show it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from campus_mcp.testing import TestDatabases, serve

from tests.support.scale_out import SHARED_KEY

REQUESTS = 20


def access_lines(log: Path) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines() if "uvicorn.access" in line]


async def requests_through_two_workers(base: str) -> None:
    """``REQUESTS`` answers, each on a new connection, so the kernel hands them to either worker."""
    for _ in range(REQUESTS):
        async with httpx.AsyncClient(timeout=10) as http:
            assert (await http.get(f"{base}/healthz")).status_code == 200


@pytest.mark.parametrize("access_log", ["false", "true"])
async def test_serve_with_two_workers_writes_access_lines_only_when_asked(
    campus_databases: TestDatabases, tmp_path: Path, access_log: str
) -> None:
    if not campus_databases.postgres:
        pytest.skip("serve --workers needs PostgreSQL: set CAMPUS_MCP_TEST_DATABASE_URL")
    env = {
        "CAMPUS_MCP_DATABASE_URL": await campus_databases.demo_copy(),
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_ACCESS_LOG": access_log,
    }
    log = tmp_path / "serve.log"
    try:
        with serve(env, log_path=log, args=["--no-prepare", "--workers", "2"]) as served:
            await requests_through_two_workers(served.base)
            await asyncio.sleep(0.5)  # a line written as the answer went out is in the file
    finally:
        await campus_databases.drop(env["CAMPUS_MCP_DATABASE_URL"])
    lines = access_lines(log)
    said = log.read_text(errors="replace")
    assert "Serving " in said, said[-3000:]
    if access_log == "false":
        assert lines == [], lines[:5]
    else:
        # The start's own /healthz polls are answered too: at least one line per request sent.
        assert len([line for line in lines if '"GET /healthz HTTP/1.1" 200' in line]) >= REQUESTS, said[-3000:]
