"""The consent page in headless Chromium: boxes start as specified, only checked scopes are granted.

A real browser signs in on the login form and answers the consent page with the keyboard, the
server's CSP in force. The screenshot goes to test-artifacts/consent.png. Without
/usr/bin/chromium the test is skipped, except in CI, where it must run.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from campus_mcp.oauth.testkit import TEST_REDIRECT_URI, ScopeProbe, callback_params, free_port, serve_on_loopback
from campus_mcp.testing import CampusFactory

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the consent page in Chromium, but /usr/bin/chromium is missing.")
    pytest.skip(
        "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True
    )


async def test_consent_page_in_chromium(campus_factory: CampusFactory) -> None:
    from playwright.async_api import async_playwright

    port = free_port()
    campus = await campus_factory(
        plugins=[],
        extra_plugins=[("probe", ScopeProbe())],
        demo=True,
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
    )
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(timeout=30) as http:
        registered = await http.post(
            f"{base}/api/oauth/register", json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Browser App"}
        )
        client_id = registered.json()["client_id"]
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        authorize = f"{base}/api/oauth/authorize?" + urlencode(
            {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": TEST_REDIRECT_URI,
                "scope": "probe:public probe:read probe:write",
                "state": "browser",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": f"{base}/api/mcp",
            }
        )
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(CHROMIUM),
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            try:
                page = await browser.new_page()
                violations: list[str] = []
                page.on("console", lambda message: violations.append(message.text) if message.type == "error" else None)
                await page.goto(authorize)
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
                landed = callback_params((await sent.value).url)
                assert not [v for v in violations if "Content Security Policy" in v], violations
            finally:
                await browser.close()

        token = await http.post(
            f"{base}/api/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": landed["code"],
                "redirect_uri": TEST_REDIRECT_URI,
                "client_id": client_id,
                "code_verifier": verifier,
            },
        )
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "probe:public probe:write"
