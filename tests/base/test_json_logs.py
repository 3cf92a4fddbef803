"""``CAMPUS_MCP_LOG_FORMAT=json``: every line a served campus writes parses as JSON (issue 27, point 4).

A real ``campus-mcp serve`` on loopback with the access log and the scheduler on answers a sign-in
and MCP tool calls, REST, a proxy's request id and a client's; ``campus-mcp jobs run`` runs a job
with the same settings. The whole of both logs is read: one JSON object a line, UTC times, the
request id each answer names in its ``X-Request-ID``, and a tool call's line with its tool,
outcome, duration, client and a pseudonymous student key, never the student's name or token.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
from campus_mcp.base.log_lines import RepeatFolder
from campus_mcp.testing import TestDatabases, serve
from campus_mcp.testing.oauth import BrowserStudent, MemoryStorage, provider_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def json_lines(text: str) -> list[dict[str, Any]]:
    lines = [line for line in text.splitlines() if line.strip()]
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"a log line is not JSON: {line!r}\n\nthe log:\n{text[-3000:]}") from None
    for entry in parsed:
        assert {"time", "level", "logger", "message"} <= set(entry), entry
        assert entry["time"].endswith("Z"), entry  # UTC
    return parsed


async def test_every_line_of_a_served_campus_is_json(campus_databases: TestDatabases, tmp_path: Path) -> None:
    database_url = await campus_databases.empty()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_LOG_FORMAT": "json",
        "CAMPUS_MCP_ACCESS_LOG": "true",  # uvicorn's lines too
        "CAMPUS_MCP_TRUSTED_PROXIES": "127.0.0.1",  # the test plays the proxy that names the request
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    storage = MemoryStorage()
    with serve(env, log_path=tmp_path / "serve.log") as served:
        async with httpx.AsyncClient(base_url=served.base, timeout=30) as rest:
            named = await rest.get("/api/v1/openapi.json", headers={"X-Request-ID": "proxy-req-0001"})
            planted = await rest.get("/api/v1/catalog/sections", headers={"X-Request-ID": "<script>x</script> spoofed"})
            missing = await rest.get("/api/v1/nowhere")
        assert named.headers["x-request-id"] == "proxy-req-0001"
        made = planted.headers["x-request-id"]
        assert made != "<script>x</script> spoofed" and len(made) == 32
        assert missing.status_code == 404 and len(missing.headers["x-request-id"]) == 32
        student = BrowserStudent("student1", "demo")
        async with (
            httpx2.AsyncClient(auth=provider_for(served.mcp_url, student, storage), timeout=60) as http,
            Client(streamable_http_client(served.mcp_url, http_client=http)) as client,  # type: ignore[arg-type]
        ):
            answer = await client.call_tool("my_courses", {})
            assert not answer.is_error, answer.content
        log = served.log.read_text(errors="replace")

    entries = json_lines(log)
    loggers = {entry["logger"] for entry in entries}
    # Every logger in the one format: uvicorn's, the scheduler's, the server's own.
    assert {"uvicorn.error", "uvicorn.access", "apscheduler.scheduler", "campus_mcp.cli.main"} <= loggers, loggers
    access = [entry for entry in entries if entry["logger"] == "uvicorn.access"]
    assert any(entry.get("request_id") == "proxy-req-0001" for entry in access), access
    assert any(entry.get("request_id") == made for entry in access), access
    calls = [entry for entry in entries if entry["logger"] == "campus_mcp.tool_calls"]
    assert len(calls) == 1, calls
    call = calls[0]
    assert call["tool"] == "my_courses" and call["outcome"] == "ok" and call["duration_ms"] >= 0
    assert call["client_id"] and call["request_id"]
    assert len(call["student"]) == 16 and call["student"] != "1"
    # Never the student's name, and never a token, anywhere in the log.
    assert "student1" not in json.dumps(call)
    assert storage.tokens is not None and storage.tokens.access_token not in log

    # A job run, with the same settings: its log lines are JSON too (its one answer is on stdout).
    job_env = {key: value for key, value in os.environ.items() if not key.startswith("CAMPUS_MCP_")}
    job_env |= env
    ran = await asyncio.to_thread(
        subprocess.run,
        [str(Path(sys.executable).parent / "campus-mcp"), "jobs", "run", "dining.refresh_hours"],
        env=job_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert "dining.refresh_hours: ok" in ran.stdout
    job_entries = json_lines(ran.stderr)
    assert any("dining.refresh_hours" in entry["message"] for entry in job_entries), job_entries
    await campus_databases.drop(database_url)


def test_a_repeated_warning_is_written_once_per_interval_with_a_count() -> None:
    now = [0.0]
    folder = RepeatFolder(interval=60, clock=lambda: now[0])
    written: list[logging.LogRecord] = []

    def warn(message: str, *args: object, level: int = logging.WARNING) -> None:
        record = logging.LogRecord("campus_mcp.web.app", level, __file__, 1, message, args, None)
        if folder.filter(record):
            written.append(record)

    for second in range(7):  # a 7-second outage: a warning on every request
        now[0] = float(second)
        for path in ("/api/v1/me", "/api/mcp"):
            warn("%s: the database cannot be reached (%s)", path, "OperationalError")
        warn("answer cache: Redis read failed (%s)", "ConnectionError")
    warn("something else went wrong", level=logging.ERROR)  # an error is never held back
    assert [record.getMessage() for record in written] == [
        "/api/v1/me: the database cannot be reached (OperationalError)",
        "answer cache: Redis read failed (ConnectionError)",
        "something else went wrong",
    ]
    now[0] = 61.0
    warn("%s: the database cannot be reached (%s)", "/api/mcp", "OperationalError")
    assert getattr(written[-1], "repeated", None) == 13  # the ones held back since the first
