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
The 2025-11-25 era has no back channel on this stateless HTTP endpoint, so a 2025 client is sent to
the confirmation page (below); on stdio the question (``elicitation/create``) and its answer travel
inside the one call, in one process.

- Begun on process 1, accepted on process 2: the change is made once; the same state and answer
  sent again to process 1 are refused (-32602: the answered state is recorded in the shared
  database, not in one process), and the setting's version went up by one.
- Begun on process 2, declined on process 1: nothing changes.

The confirmation page (issue 39) crosses processes too: a 2025-11-25 SDK client's first call on one
process leaves the change waiting in the shared database with a link to the page; the student's
Chromium signs in and opens the question on both processes, and Confirm makes the change once (the
other tab says it was already made). The link alone changes nothing: no session, the bearer token,
another student's session, a form without the session's CSRF token, or past its time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import TestDatabases
from campus_mcp.testing.oauth import free_port, parse_forms
from mcp import Client
from mcp.shared.exceptions import MCPError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.support.chromium import chromium, require_chromium
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
    database_url: str


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
            database_url=database_url,
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


# The confirmation page (issue 39): a 2025-11-25 client cannot be asked, so the change waits for
# the student's Confirm on the page, which either process may serve.
PAGE_LINK = re.compile(r"(http://127\.0\.0\.1:\d+/confirm/[A-Za-z0-9_-]+)")


async def asked_on_page(campus: TwoProcesses, mcp_url: str, arguments: dict[str, Any]) -> tuple[str, str]:
    """The SDK client's first call on the 2025-11-25 wire (no elicitation declared): nothing
    changes, the answer is not an error, and its not_changed holds the question and the link."""
    async with mcp_client(mcp_url, campus.token, "legacy") as client:
        result = await client.call_tool(TOOL, arguments)
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer is not None and answer["result"] == "unchanged", answer
    assert answer["not_changed"]["reason"] == "confirm_on_page"
    said: str = answer["not_changed"]["message"]
    found = PAGE_LINK.search(said)
    assert found is not None, said
    return found.group(1), said


@asynccontextmanager
async def browser_of(base: str, username: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser of its own (httpx with a cookie jar) signed in as ``username`` on ``base``."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as browser:
        login = await browser.get("/login", params={"next": "/dashboard"})
        data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
        signed_in = await browser.post("/login", data=data | {"username": username, "password": "demo"})
        assert signed_in.status_code in (200, 303), signed_in.text
        yield browser


def csrf_of(html: str) -> str:
    """The session's CSRF token on a signed-in page (its Sign out form carries it)."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found is not None, html
    return found.group(1)


def page_form(html: str) -> dict[str, str]:
    """The hidden fields of the page's Confirm form (the session's CSRF token among them)."""
    (confirm,) = [f for f in parse_forms(html) if any(x.value == "confirm" for x in f.fields)]
    return {f.name: f.value for f in confirm.fields if f.kind == "hidden"}


async def test_a_link_alone_changes_nothing_without_the_students_own_signed_in_browser(
    two_processes: TwoProcesses,
) -> None:
    campus = two_processes
    before = await all_classes(campus, campus.first)
    arguments = {"level": "all_classes", "title_template": "Only by the page {{crn}}"}
    link, said = await asked_on_page(campus, campus.first, arguments)
    assert link.startswith(campus.first.removesuffix("/api/mcp") + "/confirm/")  # the server's public origin
    assert "Only by the page {{crn}}" in said and "presses Confirm" in said
    path = "/confirm/" + link.rsplit("/", 1)[1]

    async with httpx.AsyncClient(timeout=30) as client:
        # The client itself: with no session, with its bearer token, GET or POST, to either process.
        for base in (campus.first, campus.second):
            origin = base.removesuffix("/api/mcp")
            bearer = {"Authorization": f"Bearer {campus.token}"}
            shown = await client.get(origin + path, headers=bearer)
            assert shown.status_code == 303 and shown.headers["location"].startswith("/login?next=%2Fconfirm%2F")
            posted = await client.post(origin + path, data={"decision": "confirm"}, headers=bearer)
            assert posted.status_code in (302, 303) and posted.headers["location"].startswith("/login?")

    # Another student's signed-in browser: the link is not theirs, so it is unknown to them.
    async with browser_of(campus.first.removesuffix("/api/mcp"), "student2") as other:
        shown = await other.get(path)
        assert "not one of yours, or it is unknown" in shown.text and "Confirm</button>" not in shown.text
        refused = await other.post(path, data={"csrf_token": csrf_of(shown.text), "decision": "confirm"})
        assert "not one of yours, or it is unknown" in refused.text

    # The student's own browser, but a POST without the page's CSRF token (a forged form).
    async with browser_of(campus.second.removesuffix("/api/mcp"), "student1") as own:
        page = await own.get(path)
        assert "Confirm</button>" in page.text and "Only by the page {{crn}}" in page.text
        forged = await own.post(path, data={"decision": "confirm"})
        assert "The form expired, so nothing was changed" in forged.text
        assert (await all_classes(campus, campus.second)) == before

        # Past its time (as if 15 minutes went by): the page says so, Confirm changes nothing.
        pending_id = path.rsplit("/", 1)[1]
        await set_expiry(campus, pending_id, minutes_ago=1)
        late = await own.post(path, data=page_form(page.text))
        assert "This confirmation link has expired" in late.text
        assert "This confirmation link has expired" in (await own.get(path)).text
    assert (await all_classes(campus, campus.first)) == before


async def set_expiry(campus: TwoProcesses, pending_id: str, *, minutes_ago: int) -> None:
    """Move a pending change's expiry into the past in the shared database, as time passing would."""
    engine = create_async_engine(campus.database_url, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text("UPDATE pending_confirmations SET expires_at = :at WHERE id = :id"),
                {"at": datetime.now(UTC).replace(tzinfo=None) - timedelta(minutes=minutes_ago), "id": pending_id},
            )
    finally:
        await engine.dispose()


async def test_the_students_browser_confirms_on_the_page_and_the_change_is_made_once_across_two_workers(
    two_processes: TwoProcesses,
) -> None:
    require_chromium("the confirmation page")
    campus = two_processes
    before = await all_classes(campus, campus.first)
    arguments = {"level": "all_classes", "title_template": "Confirmed {{course_code}}"}
    link, _said = await asked_on_page(campus, campus.second, arguments)
    assert (await all_classes(campus, campus.first)) == before
    other_worker = link.replace(campus.first.removesuffix("/api/mcp"), campus.second.removesuffix("/api/mcp"))
    assert other_worker != link

    async with chromium() as browser:
        context = await browser.new_context()
        first = await context.new_page()
        await first.goto(link)  # not signed in: the login page, then back to the question
        await first.get_by_label("Username").fill("student1")
        await first.get_by_label("Password").fill("demo")
        await first.get_by_role("button", name="Sign in").click()
        await first.get_by_role("button", name="Confirm").wait_for()
        assert first.url == link
        assert "Confirmed {{course_code}}" in await first.inner_text("main")
        # The same question open on the other worker, in a second tab of the same browser.
        second = await context.new_page()
        await second.goto(other_worker)
        await second.get_by_role("button", name="Confirm").wait_for()

        await first.get_by_role("button", name="Confirm").click()
        await first.get_by_text("Done: the change was made.").wait_for()
        await second.get_by_role("button", name="Confirm").click()
        await second.get_by_text("This change was already made. It is not made again.").wait_for()
        await first.reload()  # a reload posts nothing: the page says what happened
        assert "This change was already made" in await first.inner_text("main")

    for mcp_url in (campus.first, campus.second):
        after = await all_classes(campus, mcp_url)
        assert after["title_template"] == arguments["title_template"]
        assert after["version"] == before["version"] + 1  # made once

    # The model calls the tool again to see it: nothing is left to change, nobody is asked.
    async with mcp_client(campus.first, campus.token, "legacy") as client:
        again = await client.call_tool(TOOL, arguments)
    assert not again.is_error and (again.structured_content or {}).get("not_changed") is None, again
    assert (await all_classes(campus, campus.second))["version"] == before["version"] + 1
