"""The calendar feed is listed with the connected apps (issue 12, point 7's last part).

Through the real login form and pages: the host's Settings lists a student's feed beside the
OAuth apps with a Manage link to the feed's page, never another student's and never the secret
address; the Calendar settings page has a short card with the feed's state and the same link.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import parse_forms
from campus_settings.feed import tokens
from sqlalchemy import text

FEED_PAGE = "/dashboard/calendar-feed"
MANAGE = f'<a href="{FEED_PAGE}" aria-label="Manage Calendar feed">Manage</a>'
Feeds = tuple[CampusHarness, dict[str, int], Any]


async def _student(session: Any, username: str) -> int:
    await session.execute(
        text(
            "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
            "VALUES (:u, :d, :e, true, :now, 0)"
        ),
        {"u": username, "d": username.title(), "e": f"{username}@example.edu", "now": datetime.now(UTC)},
    )
    found = await session.execute(text("SELECT id FROM students WHERE username = :u"), {"u": username})
    return int(found.scalar_one())


@pytest.fixture
async def feeds(campus_factory: CampusFactory) -> AsyncIterator[Feeds]:
    """Two students, student1 with a feed turned on, and one HTTP client (the lifespan runs once)."""
    campus = await campus_factory(plugins=["catalog", "schedule", "settings"])
    async with campus.sessions() as session:
        ids = {name: await _student(session, name) for name in ("student1", "student2")}
        await session.commit()
        await tokens.issue(session, ids["student1"])
        await session.commit()
    async with campus.rest() as client:
        yield campus, ids, client


async def _sign_in(client: Any, username: str) -> None:
    client.cookies.clear()  # a browser of its own
    login = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
    signed_in = await client.post("/login", data=data | {"username": username, "password": "demo"})
    assert signed_in.status_code == 200, signed_in.text


def _connected_apps(html: str) -> str:
    card = re.search(r'<section class="card" id="connected-apps".*?</section>', html, re.S)
    assert card is not None, html
    return card.group(0)


async def test_settings_lists_the_feed_with_the_connected_apps_and_its_manage_link_works(feeds: Feeds) -> None:
    _campus, _ids, client = feeds
    await _sign_in(client, "student1")
    settings = await client.get("/dashboard/settings")
    assert settings.status_code == 200
    card = _connected_apps(settings.text)
    today = f"{datetime.now(UTC):%Y-%m-%d}"
    assert "<h3>Calendar feed</h3>" in card
    assert f"On since {today}; calendar apps read it with a secret link." in card
    assert MANAGE in card and "No app can use your data right now." not in card
    # Settings never shows the address again: only its hash is kept, and Settings is not its page.
    assert "/calendar/" not in settings.text
    manage = await client.get(FEED_PAGE)
    assert manage.status_code == 200 and f"Your calendar feed is on since {today}" in manage.text


async def test_a_student_without_a_feed_sees_none_and_never_the_other_students(feeds: Feeds) -> None:
    _campus, _ids, client = feeds
    await _sign_in(client, "student2")
    card = _connected_apps((await client.get("/dashboard/settings")).text)
    assert "Calendar feed" not in card and FEED_PAGE not in card
    assert "No app can use your data right now." in card


async def test_a_feed_turned_off_leaves_settings_at_once(feeds: Feeds) -> None:
    _campus, _ids, client = feeds
    await _sign_in(client, "student1")
    page = await client.get(FEED_PAGE)
    off = next(f for f in parse_forms(page.text) if f.action == f"{FEED_PAGE}/off")
    await client.post(off.action, data={f.name: f.value for f in off.fields if f.kind == "hidden"})
    card = _connected_apps((await client.get("/dashboard/settings")).text)
    assert "Calendar feed" not in card and "No app can use your data right now." in card


async def test_the_calendar_settings_page_has_a_feed_card_with_its_state_and_link(feeds: Feeds) -> None:
    _campus, _ids, client = feeds
    await _sign_in(client, "student1")
    on = (await client.get("/dashboard/calendar-settings")).text
    assert '<h2 id="feed-card-title">Calendar feed</h2>' in on
    assert f"Your calendar feed is on since {datetime.now(UTC):%Y-%m-%d}." in on
    assert f'<a href="{FEED_PAGE}">Regenerate or turn off the feed</a>' in on
    await _sign_in(client, "student2")
    off = (await client.get("/dashboard/calendar-settings")).text
    assert "Your calendar feed is off." in off and f'<a href="{FEED_PAGE}">Turn on the feed</a>' in off


async def test_the_dashboard_counts_the_feed_among_what_can_read_the_data(feeds: Feeds) -> None:
    """The Dashboard must not say "No app can use your data" while a calendar feed can."""
    _campus, _ids, client = feeds
    await _sign_in(client, "student1")
    with_feed = (await client.get("/dashboard")).text
    assert "1 app can use your" in with_feed and "No app can use" not in with_feed
    await _sign_in(client, "student2")
    assert "No app can use your" in (await client.get("/dashboard")).text
