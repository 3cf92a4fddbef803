"""Issue 12's proof with the real settings tools, end to end: ``campus-mcp serve`` on a fresh demo
campus, student1 signed in through the real pages with the write boxes checked, the SDK ``Client``
over real HTTP.

- In 2026-07-28 mode with an ``elicitation_callback``: accepting a change of the all-classes title
  template changes what ``my_calendar_settings`` says and the student's calendar feed on its next
  read; declining and cancelling change neither (``not_changed.reason``; the feed answers 304).
- A replayed ``requestState``, student1's state sent by student2, a state with other arguments and
  a state after its ten minutes each get JSON-RPC -32602 "Invalid or expired requestState" and
  change nothing.
- A legacy-era client's ``set_notifications`` answers the question and a link to the confirmation
  page first, and changes only when the student's own signed-in browser presses Confirm there
  (issue 39; the feed then drops its reminders).
- ``/metrics`` (read from loopback) counts each question and its answer.

The server's clock is moved for the expiry check by a ``sitecustomize`` on the subprocess's
``PYTHONPATH`` that adds the seconds written in a file to ``time.time`` (the clock the SDK's seal
reads), so the expiry is proven against the real server, not in-process.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx
import httpx2
import icalendar
import mcp_types as types
import pytest
from campus_mcp.testing import TestDatabases, serve
from campus_mcp.testing.oauth import BrowserStudent, MemoryStorage, parse_forms, provider_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.endpoints import confirm_in_the_students_browser, page_link_in

MODERN = "2026-07-28"
TOOL = "update_calendar_settings"
# Demo: student1's all-classes title template (campus_settings.demo).
DEMO_TITLE = "{{course_code}} {{type}} in {{room}}"
NEW_TITLE = "Class {{course_code}} ({{type}})"
# Read scopes the tools need and the two write scopes, which the consent page starts unchecked.
GRANTED = {"settings:read", "settings:write", "notifications:write"}
INVALID_STATE = "Invalid or expired requestState"
ACCEPT: types.InputResponses = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
CLOCK_SHIFT = """
import os
import time

_file = os.environ.get("CAMPUS_E2E_CLOCK_FILE")
if _file:
    _real = time.time

    def _moved() -> float:
        try:
            with open(_file) as f:
                return _real() + float(f.read() or 0)
        except (OSError, ValueError):
            return _real()

    time.time = _moved
"""


def answering(action: Literal["accept", "decline", "cancel"]) -> Any:
    """The student's answer to every question; ``callback.asked`` keeps the questions' texts."""
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


@asynccontextmanager
async def signed_in(
    mcp_url: str, username: str, storage: MemoryStorage
) -> AsyncIterator[tuple[httpx2.AsyncClient, BrowserStudent]]:
    """An HTTP client that signs ``username`` in through the real pages, checking exactly GRANTED."""
    student = BrowserStudent(username, "demo", choose=GRANTED)
    async with httpx2.AsyncClient(auth=provider_for(mcp_url, student, storage), timeout=60) as http:
        yield http, student


def client(http: httpx2.AsyncClient, mcp_url: str, mode: str = MODERN, **options: Any) -> Client:
    return Client(streamable_http_client(mcp_url, http_client=http), mode=mode, **options)  # type: ignore[arg-type]


def level(settings: dict[str, Any], name: str) -> dict[str, Any] | None:
    (entry,) = [e for e in settings["levels"] if e["level"] == name]
    stored: dict[str, Any] | None = entry["settings"]
    return stored


async def my_settings(http: httpx2.AsyncClient, mcp_url: str) -> dict[str, Any]:
    async with client(http, mcp_url) as session:
        result = await session.call_tool("my_calendar_settings", {"every_level": True})
    assert not result.is_error, result.content
    answer: dict[str, Any] = result.structured_content or {}
    assert answer, result.content
    return answer


async def feed_on(base: str, username: str) -> str:
    """Sign in on the dashboard and turn the calendar feed on: the feed's address, shown once."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as browser:
        login = await browser.get("/login", params={"next": "/dashboard"})
        hidden = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
        await browser.post("/login", data=hidden | {"username": username, "password": "demo"})
        page = await browser.get("/dashboard/calendar-feed")
        assert page.status_code == 200 and "Your calendar feed is off" in page.text, page.text[:300]
        action = "/dashboard/calendar-feed/regenerate"
        form = next(f for f in parse_forms(page.text) if f.action == action)
        # The post redirects to the page that shows the address once (post/redirect/get).
        made = await browser.post(
            action, data={f.name: f.value for f in form.fields if f.kind == "hidden"}, follow_redirects=True
        )
    assert made.status_code == 200, made.text[:300]
    (path,) = set(re.findall(r"/calendar/[A-Za-z0-9_-]{43}\.ics", made.text))
    return f"{base}{path}"


async def read_feed(url: str, etag: str | None = None) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as calendar_app:
        return await calendar_app.get(url, headers={"If-None-Match": etag} if etag else {})


def summaries(feed: httpx.Response) -> set[str]:
    calendar = icalendar.Calendar.from_ical(feed.content)
    return {str(event["SUMMARY"]) for event in calendar.walk("VEVENT")}


def alarms(feed: httpx.Response) -> int:
    return len(icalendar.Calendar.from_ical(feed.content).walk("VALARM"))


async def tool_call_counts(base: str) -> dict[tuple[str, str], float]:
    async with httpx.AsyncClient(timeout=30) as scraper:  # loopback may read /metrics without a token
        page = await scraper.get(f"{base}/metrics")
    assert page.status_code == 200, page.text[:300]
    found = re.findall(r'^campus_mcp_tool_calls_total\{outcome="(\w+)",tool="(\w+)"\} (\S+)$', page.text, re.M)
    return {(tool, outcome): float(value) for outcome, tool, value in found}


async def first_round(session: Client, arguments: dict[str, Any]) -> types.InputRequiredResult:
    first = await session.session.call_tool(TOOL, arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    assert first.request_state
    return first


async def refused(session: Client, arguments: dict[str, Any], state: str | None) -> MCPError:
    with pytest.raises(MCPError) as error:
        await session.session.call_tool(
            TOOL, arguments, input_responses=ACCEPT, request_state=state, allow_input_required=True
        )
    assert error.value.error.code == types.INVALID_PARAMS
    assert error.value.error.message == INVALID_STATE
    return error.value


async def test_the_settings_tools_ask_before_a_change_end_to_end(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.empty()
    site, clock = tmp_path / "site", tmp_path / "clock-offset"
    site.mkdir()
    (site / "sitecustomize.py").write_text(CLOCK_SHIFT)
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_SCHEDULER": "false",  # the jobs would fetch from the campus's servers
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "PYTHONPATH": str(site),
        "CAMPUS_E2E_CLOCK_FILE": str(clock),
    }
    with serve(env, log_path=tmp_path / "serve.log") as served:
        base, mcp_url = served.base, served.mcp_url
        before = await tool_call_counts(base)
        feed_url = await feed_on(base, "student1")
        feed = await read_feed(feed_url)
        assert feed.status_code == 200
        assert alarms(feed), "student1's demo class setting has reminders"
        old_titles = summaries(feed)

        student1_app = MemoryStorage()
        async with signed_in(mcp_url, "student1", student1_app) as (http, student):
            assert level(await my_settings(http, mcp_url), "all_classes")["title_template"] == DEMO_TITLE  # type: ignore[index]
            # The first call signed in: the consent page offered the write scopes unchecked, the student checked them.
            assert student.last_consent is not None
            assert student.last_consent.boxes.get("settings:write") is False
            assert student.last_consent.boxes.get("notifications:write") is False

            # Accept: the setting changes, and the feed shows the new titles on its next read.
            accept = answering("accept")
            async with client(http, mcp_url, elicitation_callback=accept) as session:
                done = await session.call_tool(TOOL, {"level": "all_classes", "title_template": NEW_TITLE})
            assert not done.is_error, done.content
            assert done.structured_content is not None and done.structured_content["result"] == "updated"
            assert len(accept.asked) == 1 and '"Class {{course_code}} ({{type}})"' in accept.asked[0]
            changed = level(await my_settings(http, mcp_url), "all_classes")
            assert changed is not None and changed["title_template"] == NEW_TITLE
            feed = await read_feed(feed_url)
            new_titles = summaries(feed)
            assert new_titles != old_titles
            assert any(re.fullmatch(r"Class [A-Z]+ \w+ \(\w+\)", title) for title in new_titles), new_titles
            etag = feed.headers["etag"]

            # Decline and cancel: asked once, nothing changes, and the feed is the same (304).
            for action, reason in (("decline", "declined"), ("cancel", "cancelled")):
                callback = answering(action)  # type: ignore[arg-type]
                async with client(http, mcp_url, elicitation_callback=callback) as session:
                    kept = await session.call_tool(TOOL, {"level": "all_classes", "title_template": "No {{crn}}"})
                assert not kept.is_error, kept.content
                answer = kept.structured_content
                assert answer is not None and answer["result"] == "unchanged", answer
                assert answer["not_changed"]["reason"] == reason and answer["not_changed"]["message"]
                assert answer["settings"]["title_template"] == NEW_TITLE
                assert len(callback.asked) == 1
                assert level(await my_settings(http, mcp_url), "all_classes") == changed
                assert (await read_feed(feed_url, etag)).status_code == 304

            # A replayed state: the first answer changes, the same state again is refused.
            replayed = {"level": "all_classes", "title_template": "Once {{course_code}}"}
            async with client(http, mcp_url, elicitation_callback=answering("accept")) as session:
                first = await first_round(session, replayed)
                once = await session.session.call_tool(
                    TOOL, replayed, input_responses=ACCEPT, request_state=first.request_state
                )
                assert isinstance(once, types.CallToolResult) and not once.is_error, once
                assert once.structured_content is not None and once.structured_content["result"] == "updated"
                await refused(session, replayed, first.request_state)
            after_replay = level(await my_settings(http, mcp_url), "all_classes")
            assert after_replay is not None and after_replay["title_template"] == "Once {{course_code}}"
            assert after_replay["version"] == changed["version"] + 1  # changed once, not twice

            # The same state with other arguments, and a state after its ten minutes.
            asked = {"level": "all_classes", "title_template": "Asked {{course_code}}"}
            async with client(http, mcp_url, elicitation_callback=answering("accept")) as session:
                first = await first_round(session, asked)
                await refused(session, {**asked, "title_template": "Not asked {{crn}}"}, first.request_state)
                late = await first_round(session, asked)
                clock.write_text("601")  # the server's clock, ten minutes and a second on
                try:
                    await refused(session, asked, late.request_state)
                finally:
                    clock.write_text("0")
                student1_state = (await first_round(session, asked)).request_state
            assert level(await my_settings(http, mcp_url), "all_classes") == after_replay

            # Student1's state sent by student2 with the same arguments: a second sign-in through the
            # same registered client app, so only the student differs.
            student2_app = MemoryStorage()
            student2_app.client = student1_app.client
            async with signed_in(mcp_url, "student2", student2_app) as (http2, _):
                student2_before = level(await my_settings(http2, mcp_url), "all_classes")
                async with client(http2, mcp_url, elicitation_callback=answering("accept")) as session:
                    await refused(session, asked, student1_state)
                assert level(await my_settings(http2, mcp_url), "all_classes") == student2_before
            assert student1_app.client is not None and student2_app.client is student1_app.client  # not re-registered
            assert level(await my_settings(http, mcp_url), "all_classes") == after_replay

            # A legacy-era client cannot be asked: its first call changes nothing and answers the
            # question and a link to the confirmation page (issue 39); the student's own browser signs in
            # to the campus and presses Confirm there, and the change is made.
            legacy_callback = answering("decline")
            pause = {"paused": True, "hours": 2}
            async with client(http, mcp_url, mode="legacy", elicitation_callback=legacy_callback) as session:
                assert str(session.protocol_version) < MODERN
                asked = await session.call_tool("set_notifications", pause)
            assert not asked.is_error and asked.structured_content is not None, asked.content
            waiting = asked.structured_content["not_changed"]
            assert waiting["reason"] == "confirm_on_page", waiting
            assert (await my_settings(http, mcp_url))["notifications"]["paused"] is False
            link = page_link_in(base, waiting["message"])
            done = await confirm_in_the_students_browser(base, link, "student1")
            assert "Done: the change was made." in done, done
            assert legacy_callback.asked == []
            assert (await my_settings(http, mcp_url))["notifications"]["paused"] is True
            assert alarms(await read_feed(feed_url)) == 0  # no reminders while paused

        grown = {key: value - before.get(key, 0) for key, value in (await tool_call_counts(base)).items()}
    await campus_databases.drop(database_url)
    # Questions: accept, decline, cancel, the replay's, the other arguments', the late one, student1's
    # for student2. Answers: accept and the replay's first use changed. The replay is the one error:
    # a state with other arguments, after expiry or of another caller is refused by the SDK's seal
    # before the tool runs, so it is not a tools/call outcome of ours and is not counted.
    assert grown.get((TOOL, "input_required")) == 7, grown
    assert grown.get((TOOL, "ok")) == 2, grown
    assert grown.get((TOOL, "declined")) == 1, grown
    assert grown.get((TOOL, "cancelled")) == 1, grown
    assert grown.get((TOOL, "error")) == 1, grown
    assert grown.get(("set_notifications", "confirmation_page")) == 1, grown
    assert grown.get(("set_notifications", "confirmed_on_page")) == 1, grown
    assert len([key for key in grown if key[0] == "set_notifications"]) == 2, grown
