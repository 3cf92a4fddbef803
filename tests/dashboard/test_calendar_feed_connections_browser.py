"""The calendar feed listed on Settings, in headless Chromium at phone width.

A student turns the feed on with the button of its page, then opens Settings: the feed is under
Connected apps, the card fits the window, and its Manage link opens the feed's page. The
Calendar settings page's feed card is on too. Screenshots go to test-artifacts/pages/.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port, serve_on_loopback
from playwright.async_api import ViewportSize
from sqlalchemy import text

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "pages"
PHONE = ViewportSize(width=390, height=844)

if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed at /usr/bin/chromium", allow_module_level=True)


async def test_the_feed_is_listed_on_settings_at_phone_width_and_manage_opens_its_page(
    campus_factory: CampusFactory,
) -> None:
    from playwright.async_api import async_playwright

    campus = await campus_factory(plugins=["catalog", "schedule", "settings"])
    async with campus.sessions() as session:
        await session.execute(
            text(
                "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
                "VALUES ('student1', 'Student1', NULL, true, :now, 0)"
            ),
            {"now": datetime.now(UTC)},
        )
        await session.commit()
    async with serve_on_loopback(campus.app, free_port()) as base, async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            page = await (await browser.new_context(viewport=PHONE)).new_page()
            await page.goto(f"{base}/login?next=/dashboard/calendar-feed")
            await page.get_by_label("Username").fill("student1")
            await page.get_by_label("Password").fill("demo")
            async with page.expect_navigation():
                await page.get_by_role("button", name="Sign in").click()
            async with page.expect_navigation():
                await page.get_by_role("button", name="Turn on").click()
            await page.goto(f"{base}/dashboard/settings")
            card = page.locator("#connected-apps")
            await card.get_by_role("heading", name="Calendar feed").wait_for()
            assert "calendar apps read it with a secret link" in await card.inner_text()
            width = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "settings-with-feed-phone.png"), full_page=True)
            assert width[0] <= width[1], f"Settings is {width[0]} px wide in a {width[1]} px window"
            async with page.expect_navigation() as opened:
                await card.get_by_role("link", name="Manage Calendar feed").click()
            response = await opened.value
            assert response is not None and response.status == 200
            assert page.url == f"{base}/dashboard/calendar-feed"
            assert "Your calendar feed is on since" in await page.inner_text("main")
            await page.goto(f"{base}/dashboard/calendar-settings")
            assert "Your calendar feed is on since" in await page.inner_text("main")
        finally:
            await browser.close()
