"""``serve --workers 2`` forks its workers from a supervisor that loaded the host and the plugins
(campus_mcp.cli.forked_workers), or with the switch off spawns them as uvicorn does; either
way both workers start and answer (issue 36, point 7: forked, they share what they only read,
about half of each worker's memory, as bench/worker_memory.py measures).

A spawned worker is a fresh interpreter started with multiprocessing's ``--multiprocessing-fork``
argument; a forked one is a copy of the supervisor, with the supervisor's command line.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

import campus_mcp.cli.forked_workers as forked_workers
import httpx
import pytest
from campus_mcp.testing import TestDatabases, serve

PARENT = re.compile(r"Started parent process \[(\d+)\]")


def workers_of(supervisor: int) -> list[bytes]:
    """The command lines of the supervisor's worker processes (multiprocessing's resource tracker left out)."""
    lines = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != supervisor:
                continue
            line = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in line:
            lines.append(line)
    return lines


async def test_two_workers_start_forked_or_spawned_and_answer(
    campus_databases: TestDatabases, tmp_path: Path, both_ways: bool
) -> None:
    if not campus_databases.postgres:
        pytest.skip("serve --workers needs PostgreSQL: set CAMPUS_MCP_TEST_DATABASE_URL")
    database = await campus_databases.migrated_copy()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database,
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key-of-two-workers",
        "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
        # serve() passes the server none of this process's CAMPUS_MCP_ settings: the switch itself.
        "CAMPUS_MCP_SPEEDUPS": "on" if both_ways else "off",
    }
    log = tmp_path / "serve.log"
    try:
        with serve(env, log_path=log, args=["--no-prepare", "--workers", "2"], start_timeout_s=120) as served:
            deadline = time.monotonic() + 90
            while log.read_text(errors="replace").count("Application startup complete") < 2:
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
                await asyncio.sleep(0.5)
            # Fresh connections, so the kernel hands them to both workers.
            for _ in range(6):
                async with httpx.AsyncClient(timeout=60) as http:
                    answer = await http.post(
                        served.mcp_url,
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"},
                    )
                assert answer.status_code == 200, answer.text
                assert any(tool["name"] == "search_sections" for tool in answer.json()["result"]["tools"])
            text = log.read_text(errors="replace")
            found = PARENT.search(text)
            assert found is not None, text[-2000:]
            lines = workers_of(int(found.group(1)))
            assert len(lines) == 2, lines
            spawned = [b"--multiprocessing-fork" in line for line in lines]
            assert spawned == [not both_ways] * 2, lines
            assert "died" not in text, text[-2000:]
    finally:
        await campus_databases.drop(database)


def test_a_moved_uvicorn_spawns_the_workers_with_one_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert forked_workers.fork_supported() == ()  # the uvicorn installed here is the one it was written for
    monkeypatch.setattr(forked_workers, "WRITTEN_FOR", ("0.1",))
    forked_workers.fork_supported.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="campus_mcp.base.speedups"):
            assert forked_workers.forking(True) is False
    finally:
        monkeypatch.undo()
        forked_workers.fork_supported.cache_clear()
    (line,) = [record.getMessage() for record in caplog.records]
    assert "forked_workers is off" in line and "written for 0.1" in line
    assert forked_workers.forking(False) is False
    assert forked_workers.forking(True) is True
