"""A confirmation begun on one server process completes on another (issue 15, "Done when").

Two ``campus-mcp serve`` processes on one database of the demo campus, as two workers behind a load
balancer: one ``CAMPUS_MCP_SECRET_KEY`` (it seals ``requestState``), one ``CAMPUS_MCP_PUBLIC_URL``
(the first's, so a token's audience is the same MCP URL on both) and ``CAMPUS_MCP_ALLOWED_HOSTS``
naming both, so the second answers a request addressed to it. Student1's token comes from
``campus-mcp token`` and is good on both. The database is this run's: PostgreSQL when
``CAMPUS_MCP_TEST_DATABASE_URL`` is set (CI's PostgreSQL pass), else one SQLite file that both
processes open (no scheduler: ``CAMPUS_MCP_SCHEDULER`` is off).

Only the 2026-07-28 era crosses processes: its tool call answers ``input_required`` with a sealed
``requestState``, and the client's answer is a new ``tools/call`` that any process may receive.
The 2025-11-25 era hands nothing from one process to another: on this stateless HTTP endpoint a
2025 client is not asked at all (no back channel; write_call's ``not_asked``), and on stdio the
question (``elicitation/create``) and its answer travel inside the one call, in one process.

- Begun on process 1, accepted on process 2: the change is made once; the same state and answer
  sent again to process 1 are refused (-32602: the answered state is recorded in the shared
  database, not in one process), and the setting's version went up by one.
- Begun on process 2, declined on process 1: nothing changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import TestDatabases
from campus_mcp.testing.oauth import free_port
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.endpoints import mcp_client
from tests.support.scale_out import SHARED_KEY, campus_mcp, run_command, running, tail, wait_for

MODERN = "2026-07-28"
TOOL = "update_calendar_settings"
SCOPES = "settings:read settings:write"
INVALID_STATE = "Invalid or expired requestState"
ACCEPT: types.InputResponses = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
DECLINE: types.InputResponses = {"confirm": types.ElicitResult(action="decline")}


@dataclasses.dataclass(frozen=True)
class TwoProcesses:
    """Two serve processes of one campus, and student1's token (good on both)."""

    first: str  # the MCP URL of process 1
    second: str  # the MCP URL of process 2
    token: str
    logs: tuple[Path, Path]


@contextmanager
def started(database_url: str, folder: Path) -> Iterator[tuple[list[str], list[Path], dict[str, str]]]:
    ports = [free_port(), free_port()]
    public = f"http://127.0.0.1:{ports[0]}"
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PUBLIC_URL": public,
        "CAMPUS_MCP_ALLOWED_HOSTS": ",".join(f"127.0.0.1:{port}" for port in ports),
        "CAMPUS_MCP_SCHEDULER": "false",  # the jobs would fetch from the campus's servers
        "CAMPUS_MCP_CONFIG": str(folder / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(folder / "var"),
    }
    logs = [folder / "serve-1.log", folder / "serve-2.log"]
    servers = [
        campus_mcp("serve", "--no-prepare", "--host", "127.0.0.1", "--port", str(port), env=env, log=log)
        for port, log in zip(ports, logs, strict=True)
    ]
    with running(*servers):
        yield [f"http://127.0.0.1:{port}" for port in ports], logs, env


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def two_processes(
    campus_databases: TestDatabases, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[TwoProcesses]:
    database_url = await campus_databases.demo_copy()
    folder = tmp_path_factory.mktemp("two-processes")
    with started(database_url, folder) as (bases, logs, env):
        # The token while both start: an issuance in the shared database, for the public MCP URL.
        issued = asyncio.create_task(
            asyncio.to_thread(run_command, "token", "--student", "student1", "--scopes", SCOPES, env=env)
        )
        async with httpx.AsyncClient(timeout=5) as http:
            for base, log in zip(bases, logs, strict=True):

                async def healthy(base: str = base) -> bool:
                    return (await http.get(f"{base}/healthz")).status_code == 200

                await wait_for(healthy, within=150, what=f"serve answering on {base}", log=log)
        token = await issued
        assert token.returncode == 0, token.stderr
        yield TwoProcesses(
            first=f"{bases[0]}/api/mcp",
            second=f"{bases[1]}/api/mcp",
            token=token.stdout.strip(),
            logs=(logs[0], logs[1]),
        )
    for log in logs:
        said = log.read_text(errors="replace")
        assert "Traceback" not in said, tail(log)
    await campus_databases.drop(database_url)


async def never_called(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    raise AssertionError(f"asked on the back channel: {params.message}")


@asynccontextmanager
async def student1_on(campus: TwoProcesses, mcp_url: str) -> AsyncIterator[Client]:
    """An SDK session of student1 (the bearer token) with one process, in the 2026-07-28 era."""
    # never_called declares that the client can be asked; the tests answer by hand (input_responses).
    async with mcp_client(mcp_url, campus.token, MODERN, elicitation_callback=never_called) as session:
        yield session


async def call(
    campus: TwoProcesses, mcp_url: str, arguments: dict[str, Any], **options: Any
) -> types.CallToolResult | types.InputRequiredResult | MCPError:
    """One ``tools/call`` of TOOL on one process, on a session of its own; a JSON-RPC error is
    returned (caught inside the session, which would wrap it in an exception group)."""
    async with student1_on(campus, mcp_url) as session:
        try:
            return await session.session.call_tool(TOOL, arguments, allow_input_required=True, **options)
        except MCPError as error:
            return error


async def all_classes(campus: TwoProcesses, mcp_url: str) -> dict[str, Any]:
    """Student1's all-classes setting as ``my_calendar_settings`` on ``mcp_url`` says it."""
    async with student1_on(campus, mcp_url) as session:
        result = await session.call_tool("my_calendar_settings", {})
    assert not result.is_error, result.content
    (entry,) = [e for e in (result.structured_content or {})["levels"] if e["level"] == "all_classes"]
    setting: dict[str, Any] = entry["settings"]
    return setting


async def asked(campus: TwoProcesses, mcp_url: str, arguments: dict[str, Any]) -> str:
    first = await call(campus, mcp_url, arguments)
    assert isinstance(first, types.InputRequiredResult), first
    assert first.request_state
    return first.request_state


async def test_begun_on_one_process_accepted_on_the_other_changes_once(two_processes: TwoProcesses) -> None:
    campus = two_processes
    before = await all_classes(campus, campus.first)
    arguments = {"level": "all_classes", "title_template": "Across {{course_code}} ({{type}})"}

    state = await asked(campus, campus.first, arguments)
    assert (await all_classes(campus, campus.second)) == before  # asked, not changed

    done = await call(campus, campus.second, arguments, input_responses=ACCEPT, request_state=state)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert done.structured_content is not None and done.structured_content["result"] == "updated", done

    # The same answer again, to the process that asked: refused, the state was answered on the other.
    replay = await call(campus, campus.first, arguments, input_responses=ACCEPT, request_state=state)
    assert isinstance(replay, MCPError), replay
    assert replay.error.code == types.INVALID_PARAMS
    assert replay.error.message == INVALID_STATE

    for mcp_url in (campus.first, campus.second):
        after = await all_classes(campus, mcp_url)
        assert after["title_template"] == arguments["title_template"]
        assert after["version"] == before["version"] + 1  # changed once


async def test_begun_on_the_second_process_declined_on_the_first_changes_nothing(
    two_processes: TwoProcesses,
) -> None:
    campus = two_processes
    before = await all_classes(campus, campus.first)
    arguments = {"level": "all_classes", "title_template": "Declined {{crn}}"}

    state = await asked(campus, campus.second, arguments)
    kept = await call(campus, campus.first, arguments, input_responses=DECLINE, request_state=state)
    assert isinstance(kept, types.CallToolResult) and not kept.is_error, kept
    answer = kept.structured_content
    assert answer is not None and answer["result"] == "unchanged", answer
    assert answer["not_changed"]["reason"] == "declined"
    assert (await all_classes(campus, campus.second)) == before
