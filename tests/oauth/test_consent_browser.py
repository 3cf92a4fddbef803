"""The consent page in headless Chromium: boxes start as specified, only checked scopes are granted.

A real browser signs in on the login form and answers the consent page with the keyboard, the
server's CSP in force. The screenshot goes to test-artifacts/consent.png. Without
/usr/bin/chromium the test is skipped, except in CI, where it must run.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    authorization_request,
    exchange_code,
    probe_campus_on_loopback,
    register_app,
)

from tests.support.chromium import chromium, require_chromium

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

require_chromium("the consent page")


async def test_consent_page_in_chromium(campus_factory: CampusFactory) -> None:
    async with probe_campus_on_loopback(campus_factory) as (base, _campus), httpx.AsyncClient(timeout=30) as http:
        client_id = await register_app(http, base, "Browser App")
        authorization = authorization_request(base, client_id, "probe:public probe:read probe:write", state="browser")
        async with chromium() as browser:
            page = await browser.new_page()
            violations: list[str] = []
            page.on("console", lambda message: violations.append(message.text) if message.type == "error" else None)
            await page.goto(authorization.url)
            await page.get_by_label("Username").fill("student1")
            await page.get_by_label("Password").fill("demo")
            await page.get_by_role("button", name="Sign in").click()

            read_box = page.get_by_role("checkbox", name="probe:read")
            write_box = page.get_by_role("checkbox", name="probe:write")
            assert "changes your data" in await page.locator('label[for="scope-probe:write"]').inner_text()
            await read_box.wait_for()
            assert await read_box.is_checked()
            assert not await write_box.is_checked()
            assert await page.get_by_role("checkbox", name="probe:public").count() == 0
            assert await page.get_by_text("always on").count() == 1

            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "consent.png"), full_page=True)

            # The student clears "read" and checks "write" with the keyboard only.
            await read_box.focus()
            await page.keyboard.press("Space")
            await page.keyboard.press("Tab")
            await page.keyboard.press("Space")
            assert not await read_box.is_checked() and await write_box.is_checked()

            # The redirect goes to the app's loopback URI, where nothing listens: record it.
            async with page.expect_request(lambda request: request.url.startswith(TEST_REDIRECT_URI)) as sent:
                await page.get_by_role("button", name="Allow").click()
            callback_url = (await sent.value).url
            assert not [v for v in violations if "Content Security Policy" in v], violations

        # The app leaves out the resource parameter in its exchange (RFC 8707 lets it).
        token = await exchange_code(http, authorization, callback_url, send_resource=False)
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "probe:public probe:write"
