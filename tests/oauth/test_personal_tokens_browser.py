"""The Access tokens page in headless Chromium, at phone width, with every installed family enabled.

student1 opens Access tokens (the login form comes first), finds a box per permission with the
ones that change data unchecked, checks one, makes a token, sees it once in the copy box, finds it
listed (and no longer shown), then disconnects it under Connected apps in Settings; the token then
gets the 401 on the MCP endpoint.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from campus_mcp.assembly.registry import Registry
from campus_mcp.testing import TestDatabases

from tests.support.chromium import chromium, fits, require_chromium, served_demo_campus

TOKEN = re.compile(r"cmcp_pat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")
PHONE = {"width": 390, "height": 844}

require_chromium("the access tokens page test")


@pytest.fixture(scope="module")
async def site(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, Registry]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


async def test_make_see_once_and_disconnect_a_token(site: tuple[str, Registry]) -> None:
    base, registry = site
    async with chromium() as browser:
        context = await browser.new_context(viewport=PHONE)
        page = await context.new_page()
        await page.goto(f"{base}/dashboard/tokens")
        await page.get_by_label("Username").fill("student1")
        await page.get_by_label("Password").fill("demo")
        async with page.expect_navigation():
            await page.get_by_role("button", name="Sign in").click()
        assert page.url == f"{base}/dashboard/tokens"
        await fits(page)

        for scope in registry.scopes.values():
            box = page.get_by_role("checkbox", name=scope.title)
            if scope.always_on or scope.reserved:  # no token holds a reserved scope's nothing (issue 37)
                assert await box.count() == 0, scope.name
                continue
            assert await box.is_checked() is (not scope.writes), scope.name
        write = next(scope for scope in registry.scopes.values() if scope.writes and not scope.reserved)
        await page.get_by_role("checkbox", name=write.title).check()
        await page.get_by_label("Name").fill("Claude Desktop")
        await page.get_by_label("Expires after").select_option("7")
        async with page.expect_navigation():
            await page.get_by_role("button", name="Create token").click()

        token = await page.get_by_role("textbox", name="Token", exact=True).input_value()
        assert TOKEN.fullmatch(token)
        assert await page.get_by_role("status").filter(has_text="shown only this once").is_visible()
        await fits(page)

        await page.goto(f"{base}/dashboard/tokens")
        assert token not in await page.content()
        assert await page.get_by_role("heading", name=re.compile("Claude Desktop")).is_visible()

        await page.goto(f"{base}/dashboard/settings")
        card = page.locator("#connected-apps")
        assert await card.get_by_text(write.title).count() >= 1
        async with page.expect_navigation():
            await card.get_by_role("button", name="Disconnect Claude Desktop").click()
        assert await page.get_by_role("status").filter(has_text="Disconnected Claude Desktop").is_visible()
        assert await page.get_by_role("button", name="Disconnect Claude Desktop").count() == 0
        await context.close()

    async with httpx.AsyncClient(timeout=30) as http:
        gone = await http.post(
            f"{base}/api/mcp",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert gone.status_code == 401
