"""Redis stops in the middle of a confirmation and of an idempotent write (issue 30, point 5), on a
real ``campus-mcp serve`` whose rate limits count on a private ``redis-server`` and fail closed
(``CAMPUS_MCP_REDIS_FAIL_CLOSED``: the deployment chose refusing over counting nothing).

- A confirmation asked while Redis was up and answered while it is down: the student's app gets a
  tool error with words (try again), not a 500 and no traceback; the setting is unchanged and the
  question is not used up: the same answer, once Redis is back, makes the change once.
- An idempotency key repeated while Redis is down: the same kind of error, nothing written; once
  Redis is back the repeat answers the first answer and the setting changed once in all.

Redis holds only the rate-limit counters, so nothing of the write itself can be half in Redis: what
the test guards is that the refusal comes before any write and says what to do.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
from campus_mcp.testing import TestDatabases, private_redis
from campus_mcp.testing.oauth import free_port
from mcp import Client
from mcp.shared.exceptions import MCPError
from sqlalchemy.engine import make_url

from tests.support.endpoints import mcp_client
from tests.support.scale_out import SHARED_KEY, campus_mcp, run_command, running, tail, wait_for

MODERN = "2026-07-28"
TOOL = "update_calendar_settings"
SCOPES = "settings:read settings:write"
ACCEPT: types.InputResponses = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}


async def never_called(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    raise AssertionError(f"asked on the back channel: {params.message}")


@asynccontextmanager
async def student1(mcp_url: str, token: str) -> AsyncIterator[Client]:
    async with mcp_client(mcp_url, token, MODERN, elicitation_callback=never_called) as session:
        yield session


async def call(
    mcp_url: str, token: str, arguments: dict[str, Any], **options: Any
) -> types.CallToolResult | types.InputRequiredResult | MCPError:
    async with student1(mcp_url, token) as session:
        try:
            return await session.session.call_tool(TOOL, arguments, allow_input_required=True, **options)
        except MCPError as error:
            return error


async def all_classes(mcp_url: str, token: str) -> dict[str, Any]:
    async with student1(mcp_url, token) as session:
        result = await session.call_tool("my_calendar_settings", {})
    assert not result.is_error, result.content
    (entry,) = [e for e in (result.structured_content or {})["levels"] if e["level"] == "all_classes"]
    setting: dict[str, Any] = entry["settings"]
    return setting


def refused_for_the_outage(answer: object) -> str:
    """The words of a tool error that says the limits cannot be checked now."""
    assert isinstance(answer, types.CallToolResult), answer
    assert answer.is_error, answer
    said = " ".join(part.text for part in answer.content if isinstance(part, types.TextContent))
    assert "Traceback" not in said and "Internal" not in said, said
    assert said.startswith("Temporarily unavailable: this server cannot check its rate limits"), said
    assert "Retry after" in said, said
    return said


def restarted(redis_url: str, folder: Path) -> subprocess.Popen[bytes]:
    """redis-server again on the same port (empty: the counters start over)."""
    port = make_url(redis_url).port
    binary = shutil.which("redis-server")
    assert binary is not None and port is not None
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError("redis-server did not start again") from None
            time.sleep(0.05)


async def test_a_redis_outage_mid_confirmation_and_mid_idempotent_write_refuses_with_words_and_writes_nothing(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.demo_copy()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    mcp_url = f"{base}/api/mcp"
    log = tmp_path / "serve.log"
    again: subprocess.Popen[bytes] | None = None
    try:
        with private_redis(tmp_path / "redis") as (redis_url, redis):
            env = {
                "CAMPUS_MCP_DATABASE_URL": database_url,
                "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
                "CAMPUS_MCP_PUBLIC_URL": base,
                "CAMPUS_MCP_SCHEDULER": "false",
                "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
                "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
                "CAMPUS_MCP_REDIS_URL": redis_url,
                "CAMPUS_MCP_REDIS_FAIL_CLOSED": "true",
            }
            server = campus_mcp("serve", "--no-prepare", "--host", "127.0.0.1", "--port", str(port), env=env, log=log)
            with running(server):
                issued = await asyncio.to_thread(
                    run_command, "token", "--student", "student1", "--scopes", SCOPES, env=env
                )
                assert issued.returncode == 0, issued.stderr
                token = issued.stdout.strip()
                async with httpx.AsyncClient(timeout=5) as http:

                    async def healthy() -> bool:
                        return (await http.get(f"{base}/healthz")).status_code == 200

                    await wait_for(healthy, within=150, what="serve answering /healthz", log=log)

                before = await all_classes(mcp_url, token)
                # The idempotent write, done once while Redis is up.
                keyed = {"level": "all_classes", "title_template": "Keyed {{crn}}", "idempotency_key": "outage-1"}
                first_ask = await call(mcp_url, token, keyed)
                assert isinstance(first_ask, types.InputRequiredResult), first_ask
                first = await call(mcp_url, token, keyed, input_responses=ACCEPT, request_state=first_ask.request_state)
                assert isinstance(first, types.CallToolResult) and not first.is_error, first
                keyed_version = (await all_classes(mcp_url, token))["version"]
                assert keyed_version == before["version"] + 1

                # The question is asked of the setting as it is now (its version), while Redis is up.
                confirmed = {"level": "all_classes", "title_template": "Outage {{course_code}}"}
                asked = await call(mcp_url, token, confirmed)
                assert isinstance(asked, types.InputRequiredResult) and asked.request_state, asked
                state = asked.request_state

                redis.terminate()
                redis.wait(timeout=10)

                # The confirmation's answer arrives during the outage.
                during = await call(mcp_url, token, confirmed, input_responses=ACCEPT, request_state=state)
                refused_for_the_outage(during)
                # The idempotency key repeated during the outage.
                refused_for_the_outage(await call(mcp_url, token, keyed))

                again = restarted(redis_url, tmp_path / "redis")
                unchanged = await all_classes(mcp_url, token)
                assert unchanged["version"] == keyed_version
                assert unchanged["title_template"] == keyed["title_template"]

                # Redis is back: the same answer to the same question makes the change, once.
                done = await call(mcp_url, token, confirmed, input_responses=ACCEPT, request_state=state)
                assert isinstance(done, types.CallToolResult) and not done.is_error, done
                assert done.structured_content is not None and done.structured_content["result"] == "updated"
                after = await all_classes(mcp_url, token)
                assert after["title_template"] == confirmed["title_template"]
                assert after["version"] == keyed_version + 1

                # The keyed repeat answers the first answer and changes nothing.
                repeat = await call(mcp_url, token, keyed)
                assert isinstance(repeat, types.CallToolResult) and not repeat.is_error, repeat
                assert repeat.structured_content == first.structured_content
                assert (await all_classes(mcp_url, token))["version"] == keyed_version + 1
    finally:
        if again is not None:
            again.terminate()
            again.wait(timeout=10)
        await campus_databases.drop(database_url)
    said = log.read_text(errors="replace")
    assert "Traceback" not in said, tail(log)
    assert "rate limits: Redis is unreachable" in said and redis_url not in said
