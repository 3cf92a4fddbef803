"""The connection's life outside the tools: disconnect (revoked at Canvas), a disabled student (the
same), the student's export (without a token) and deletion (with the student), and their due work in
their calendar feed when they chose it."""

from __future__ import annotations

import asyncio
import re
from datetime import date
from typing import Any

import icalendar
import pytest
from campus_mcp.testing import CampusFactory, CampusHarness, StudentBrowser, campus_today, cli_main
from click.testing import CliRunner
from sqlalchemy import text

from .conftest import canvas_campus, canvas_settings, connect, csrf_of, student_id
from .fake_canvas import FakeCanvas

pytestmark = pytest.mark.asyncio(loop_scope="session")
FEED_URL = re.compile(r'id="feed-url" readonly value="([^"]+)"')


async def connections(campus: CampusHarness) -> int:
    async with campus.sessions() as session:
        return int((await session.execute(text("SELECT count(*) FROM canvas_connections"))).scalar_one())


async def disconnect(browser: StudentBrowser) -> Any:
    page = await browser.get("/dashboard/canvas")
    return await browser.post("/dashboard/canvas/disconnect", data={"csrf_token": csrf_of(page.text)})


async def test_disconnect_revokes_at_canvas_and_forgets_the_tokens(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        await connect(browser, canvas)
        [live] = canvas.live_tokens()
        done = await disconnect(browser)
        assert "and Canvas revoked this server" in done.text and "Connect Canvas" in done.text
        settings_page = (await browser.get("/dashboard/settings")).text
    [revoked] = [s for s in canvas.seen if s.method == "DELETE"]
    assert revoked.path == "/login/oauth2/token" and revoked.authorized
    assert canvas.tokens[live].revoked and not any(canvas.refresh_tokens.values())
    assert await connections(campus) == 0
    assert 'aria-label="Connect Canvas">Connect</a>' in settings_page


async def test_disconnect_while_canvas_is_down_still_forgets_and_says_what_to_do(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        await connect(browser, canvas)
        canvas.fail["/login/oauth2/token"] = 503
        done = await disconnect(browser)
    assert "Canvas could not be told" in done.text and "Approved Integrations" in done.text
    assert await connections(campus) == 0


async def test_a_disabled_student_s_canvas_access_is_revoked_with_the_rest(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    async with campus.rest() as client:
        await connect(await StudentBrowser(client).sign_in("student1"), canvas)
        await connect(await StudentBrowser(client).sign_in("student2"), canvas)
    first, second = canvas.live_tokens()
    env = {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_SECRET_KEY": campus.settings.secret_key.get_secret_value(),
        "CAMPUS_MCP_PLUGINS": "canvas",
        **{f"CAMPUS_MCP_CANVAS_{key.upper()}": str(value) for key, value in canvas_settings(canvas).items()},
    }
    # The real command, as an administrator runs it (its own event loop, so in a thread of its own).
    result = await asyncio.to_thread(CliRunner().invoke, cli_main, ["students", "disable", "student1"], env=env)
    assert result.exit_code == 0, result.output
    assert "Canvas turned off" in result.output
    assert canvas.tokens[first].revoked and not canvas.tokens[second].revoked
    async with campus.sessions() as session:
        left = (await session.execute(text("SELECT student_id FROM canvas_connections"))).scalars().all()
    assert left == [await student_id(campus, "student2")]


async def test_the_export_has_the_connection_without_a_token_and_deleting_the_student_deletes_it(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        await connect(browser, canvas)
        export = (await browser.get("/dashboard/activity/export")).json()
    part = export["data"]["canvas"]
    assert part["canvas_user_name"] == "Jimi Hendrix" and part["due_work_in_calendar_feed"] is False
    assert part["connected_at"] and "access_token" not in part and "refresh_token" not in part
    # Not among what reads the student's data here (the export's other_connections): it reads Canvas.
    assert export["other_connections"] == []
    assert not any(token in str(export) for token in [*canvas.tokens, *canvas.refresh_tokens])
    async with campus.sessions() as session:
        await session.execute(text("DELETE FROM students WHERE username = 'student1'"))
        await session.commit()
    assert await connections(campus) == 0


async def feed_events(browser: StudentBrowser, url: str) -> dict[str, Any]:
    answer = await browser.get(url)
    assert answer.status_code == 200, answer.text
    return {str(e["uid"]): e for e in icalendar.Calendar.from_ical(answer.content).walk("VEVENT")}


async def test_due_work_is_in_the_calendar_feed_only_when_the_student_chooses_it(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(
        campus_factory, canvas, canvas={"cache_seconds": 0}, plugins=("catalog", "schedule", "settings", "canvas")
    )
    canvas.week_of = campus_today(campus.settings)  # the fixtures' week moved to this week
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        await connect(browser, canvas)
        feed_page = await browser.get("/dashboard/calendar-feed")
        made = await browser.post("/dashboard/calendar-feed/regenerate", data={"csrf_token": csrf_of(feed_page.text)})
        found = FEED_URL.search(made.text)
        assert found is not None
        url = found.group(1).replace("&amp;", "&")
        assert not any(uid.startswith("canvas-") for uid in await feed_events(browser, url))  # off by default
        page = await browser.get("/dashboard/canvas")
        chose = await browser.post("/dashboard/canvas/feed", data={"csrf_token": csrf_of(page.text), "due_work": "on"})
        assert "will be in your calendar feed" in chose.text
        events = await feed_events(browser, url)
        due = {str(e["summary"]): e for uid, e in events.items() if uid.startswith("canvas-due-dates-")}
        assert "Due: Problem Set 5 (MATH 1750)" in due and "Due: Quiz 4: derivatives (MATH 1750)" in due
        ps5 = due["Due: Problem Set 5 (MATH 1750)"]
        monday = campus_today(campus.settings)
        wednesday = date.fromordinal(monday.toordinal() - monday.weekday() + 2)
        assert ps5.decoded("dtstart").date() == wednesday and "dtend" not in ps5
        assert str(ps5["url"]).startswith(f"{canvas.origin}/courses/101/assignments/5001")
        # Canvas down: the feed is still served, without the due dates this time.
        canvas.fail["/api/v1/planner/items"] = 503
        assert not any(uid.startswith("canvas-") for uid in await feed_events(browser, url))
        canvas.fail.clear()
        # Turned off again: gone from the feed while Canvas answers.
        page = await browser.get("/dashboard/canvas")
        await browser.post("/dashboard/canvas/feed", data={"csrf_token": csrf_of(page.text)})
        assert not any(uid.startswith("canvas-") for uid in await feed_events(browser, url))
