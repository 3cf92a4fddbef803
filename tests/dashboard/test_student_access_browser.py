"""Recent activity in headless Chromium at phone width (390 px): a personal access token reads the
student's courses over REST; the Dashboard's Connected apps card says when it last read; student1
finds that read on Recent activity (what, when, which app)
without the page scrolling sideways, downloads their data, then sees under Connected apps when the
token last read and disconnects it with one click."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from campus_mcp.testing import TestDatabases

from tests.support.chromium import chromium, fits, require_chromium, served_demo_campus

PHONE = {"width": 390, "height": 844}
TOKEN = re.compile(r"cmcp_pat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")

require_chromium("the recent activity page test")


@pytest.fixture(scope="module")
async def site(campus_databases: TestDatabases) -> AsyncIterator[str]:
    async with served_demo_campus(campus_databases) as (base, _registry):
        yield base


async def test_recent_activity_at_phone_width_download_and_disconnect(site: str, tmp_path: Path) -> None:
    base = site
    async with chromium() as browser:
        context = await browser.new_context(viewport=PHONE, accept_downloads=True)
        page = await context.new_page()
        await page.goto(f"{base}/dashboard/tokens")
        await page.get_by_label("Username").fill("student1")
        await page.get_by_label("Password").fill("demo")
        async with page.expect_navigation():
            await page.get_by_role("button", name="Sign in").click()
        await page.get_by_label("Name").fill("Grade script")
        async with page.expect_navigation():
            await page.get_by_role("button", name="Create token").click()
        token = await page.get_by_role("textbox", name="Token", exact=True).input_value()
        assert TOKEN.fullmatch(token)

        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            read = await http.get("/api/v1/me/courses", headers={"Authorization": f"Bearer {token}"})
        assert read.status_code == 200

        await page.goto(f"{base}/dashboard")
        apps_card = page.locator("section").filter(has=page.get_by_role("heading", name="Connected apps"))
        assert await apps_card.get_by_text(
            re.compile(r"Grade script: last read your data \d{4}-\d\d-\d\d")
        ).is_visible()
        await fits(page)
        async with page.expect_navigation():
            await page.get_by_role("link", name="Recent activity").first.click()
        assert page.url == f"{base}/dashboard/activity"
        row = page.get_by_role("row").filter(has_text="Grade script")
        assert await row.count() == 1
        assert await row.get_by_text("Read: My courses").is_visible()
        assert await row.get_by_text("Done").is_visible()
        await fits(page)

        async with page.expect_download() as waiting:
            await page.get_by_role("link", name="Download my data").click()
        download = await waiting.value
        saved = tmp_path / "data.json"
        await download.save_as(saved)
        document = json.loads(saved.read_text())
        assert document["student"]["username"] == "student1"
        assert [entry["app_name"] for entry in document["activity"]] == ["Grade script"]
        assert token not in saved.read_text()

        async with page.expect_navigation():
            await page.get_by_role("link", name="Settings, Connected apps").click()
        card = page.locator("#connected-apps")
        item = card.locator(".app").filter(has_text="Grade script")
        assert await item.get_by_text(re.compile("Last read your data")).is_visible()
        await fits(page)
        async with page.expect_navigation():
            await card.get_by_role("button", name="Disconnect Grade script").click()
        assert await page.get_by_role("status").filter(has_text="Disconnected Grade script").is_visible()
        await context.close()
