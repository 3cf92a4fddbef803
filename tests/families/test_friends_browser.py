"""The Friends page and a friend's week in headless Chromium at phone width (390 x 844).

The nav pages are already opened by tests/dashboard/test_pages_browser.py; a friend's page has a path
parameter, so it is not in the navigation and is opened here. Each page must answer 200, show
no Content-Security-Policy error in the console and not scroll sideways.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from campus_mcp.testing import CampusFactory, campus_today
from campus_mcp.testing.oauth import free_port, serve_on_loopback

from tests.support.chromium import chromium, require_chromium

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "pages"
PHONE = {"width": 390, "height": 844}

require_chromium("the page test")


async def test_the_friends_pages_fit_a_phone(campus_factory: CampusFactory) -> None:
    port = free_port()
    campus = await campus_factory(demo=True, anonymous_access=False, public_url=f"http://127.0.0.1:{port}")
    monday = campus_today() - timedelta(days=campus_today().weekday())
    async with serve_on_loopback(campus.app, port) as base, chromium() as browser:
        page = await (await browser.new_context(viewport=PHONE)).new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        await page.goto(f"{base}/login?next=/dashboard/friends")
        await page.get_by_label("Username").fill("student1")
        await page.get_by_label("Password").fill("demo")
        async with page.expect_navigation():
            await page.get_by_role("button", name="Sign in").click()
        for name, path in (
            ("friends", "/dashboard/friends"),
            ("friend-week", f"/dashboard/friends/2?week_start={monday.isoformat()}"),
        ):
            response = await page.goto(f"{base}{path}")
            assert response is not None and response.status == 200, path
            await check_width(page, name)
        # The meeting form's date and time inputs are usable on a phone: fill and send one.
        await page.goto(f"{base}/dashboard/friends")
        await page.get_by_label("Title", exact=True).fill("Coffee")
        await page.get_by_label("Day", exact=True).fill((monday + timedelta(days=12)).isoformat())
        await page.get_by_label("Starts", exact=True).fill("15:00")
        await page.get_by_label("Ends", exact=True).fill("15:45")
        await page.get_by_label("Demo Student 3", exact=True).check()
        async with page.expect_navigation():
            await page.get_by_role("button", name="Add meeting").click()
        assert "Meeting added" in await page.content()
        await check_width(page, "friends-meeting")
        # A blocked style or script would show here (the favicon's 404 is no page error).
        assert not [e for e in errors if "Content Security Policy" in e], errors


async def check_width(page: Any, name: str) -> None:
    width = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"{name}-phone.png"), full_page=True)
    assert width[0] <= width[1], f"{name} is {width[0]} px wide in a {width[1]} px window"
