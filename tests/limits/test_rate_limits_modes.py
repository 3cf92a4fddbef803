"""The limits when Redis is down and set to fail closed, and the platform-ranges job (issue 15 point 1).

Fail closed: the counters' Redis is a loopback port nobody listens on (no redis-server needed). A
request is refused with 503 and Retry-After, the answer a client and a proxy retry (the server's
trouble: a 429 would tell the student they used up a quota nobody could count); a tool call gets a
tool error saying so, which a model can act on.

The job ``core.platform_ranges``: run by ``campus-mcp jobs run`` in a process of its own, as the
leader's scheduler would, from a file with a line that is not a network (reported, the others
kept); a server started afterwards gives those addresses the platform backstop. A source on
loopback or private space is refused by the SSRF guard, and the copy in use is kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from campus_mcp.jobs.scheduler import run_job
from campus_mcp.limits.platforms import COPY_FILE, JOB_ID
from campus_mcp.oauth.token_cli import issue
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port, serve_on_loopback

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def rpc(method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})


async def test_redis_down_and_fail_closed_refuses_with_503_and_a_tool_error(
    campus_factory: CampusFactory, caplog: pytest.LogCaptureFixture
) -> None:
    port, dead = free_port(), free_port()
    redis_url = f"redis://:hunter2-not-logged@127.0.0.1:{dead}/0"
    campus = await campus_factory(
        demo=True,
        rate_limits=True,
        anonymous_access=True,
        public_url=f"http://127.0.0.1:{port}",
        redis_url=redis_url,
        redis_fail_closed=True,
    )
    token, _ = await issue(campus.deployment, "student1", ["catalog"], 10)
    signed_in = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    caplog.set_level(logging.WARNING, logger="campus_mcp.limits")
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        ping = await http.post("/api/mcp", content=rpc("ping"), headers=signed_in)
        assert ping.status_code == 503, ping.text[:300]
        assert ping.headers["retry-after"] == "5"
        assert "ratelimit" not in ping.headers  # no count is known
        assert ping.json()["error"] == "temporarily_unavailable"
        assert "cannot check its rate limits" in ping.json()["error_description"]

        # A tool call, signed in or not: a tool error the model can act on, not an HTTP failure.
        for headers in (signed_in, MCP_HEADERS):
            call = await http.post("/api/mcp", content=rpc("tools/call", {"name": "list_terms"}), headers=headers)
            assert call.status_code == 200, call.text[:300]
            result = call.json()["result"]
            assert result["isError"] is True
            text = result["content"][0]["text"]
            assert text.startswith("Temporarily unavailable") and "Retry after 5 seconds" in text
            assert "not because of anything the student did" in text

        rest = await http.get("/api/v1/catalog/terms")
        assert rest.status_code == 503
        assert rest.json()["error"] == "LimitsUnavailable" and "Retry after 5 seconds" in rest.json()["message"]
        assert rest.headers["retry-after"] == "5"
        assert "Traceback" not in rest.text
        # What is not a limited resource still answers.
        assert (await http.get("/healthz")).status_code == 200
    warnings = [r.getMessage() for r in caplog.records if "Redis is unreachable" in r.getMessage()]
    assert len(warnings) == 1, warnings  # once, not once per request
    assert "refused" in warnings[0]
    assert all("hunter2" not in r.getMessage() for r in caplog.records)


async def test_the_platform_ranges_job_reads_a_file_and_refuses_private_urls(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    port = free_port()
    source = tmp_path / "platform-ranges.txt"
    source.write_text("# the platform's egress\n10.99.0.0/16\nten.ninety-nine.zero.zero\n2001:db8:99::/48\n")
    var_dir = tmp_path / "var"
    campus = await campus_factory(
        demo=True,
        rate_limits=True,
        anonymous_access=True,
        public_url=f"http://127.0.0.1:{port}",
        trusted_proxies=["127.0.0.1"],
        platform_ranges=[],
        platform_ranges_source=str(source),
        var_dir=str(var_dir),
        rate_limit_overrides=["api/address=2", "mcp/platform=4"],
    )
    # The job runs in a process of its own (the scheduler's, or an operator's command), not the server's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env |= {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(var_dir),
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key",
        "CAMPUS_MCP_PLATFORM_RANGES_SOURCE": str(source),
    }
    command = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "campus-mcp"),
        "jobs",
        "run",
        JOB_ID,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await command.communicate()
    assert command.returncode == 0, output.decode(errors="replace")[-2000:]
    assert f"{JOB_ID}: partial, 2 item(s)" in output.decode()
    [run] = await campus.job_runs(JOB_ID)
    assert run.outcome == "partial" and run.items == 2
    assert run.lost == {"line 3": "'ten.ninety-nine.zero.zero' is not a network like 192.0.2.0/24; left out"}

    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        # An address of the list, behind the trusted proxy: past the address limit, up to the backstop.
        platform = {"X-Forwarded-For": "10.99.1.1"}
        for _ in range(4):
            assert (await http.get("/api/v1/catalog/terms", headers=platform)).status_code == 200
        over = await http.get("/api/v1/catalog/terms", headers=platform)
        assert over.status_code == 429
        assert over.headers["ratelimit-policy"] == '"mcp/platform";q=4;w=60'
        # An address outside it keeps the per-address limit.
        other = {"X-Forwarded-For": "198.51.100.30"}
        assert [(await http.get("/api/v1/catalog/terms", headers=other)).status_code for _ in range(3)] == [
            200,
            200,
            429,
        ]

    # A URL on loopback or in private space: the SSRF guard refuses it before connecting; the copy stays.
    for url in ("https://127.0.0.1/ranges.json", "https://10.1.2.3/ranges.json", "https://localhost/ranges.json"):
        settings = campus.settings.model_copy(update={"platform_ranges_source": url})
        registry = dataclasses.replace(campus.registry, settings=settings)
        refused = await run_job(registry.jobs[JOB_ID], registry, campus.sessions)
        assert refused.outcome == "failed"
        assert refused.error is not None
        assert f"CAMPUS_MCP_PLATFORM_RANGES_SOURCE {url}:" in refused.error
        assert "resolves to an address that is not public" in refused.error
        assert "The platform ranges in use are kept" in refused.error
    assert json.loads((var_dir / COPY_FILE).read_text()) == ["10.99.0.0/16", "2001:db8:99::/48"]
