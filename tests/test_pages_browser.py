"""Every page a student sees, in headless Chromium, at desktop and at phone width.

The campus runs every installed plugin family and the dining example, as a deployment does
(a page test with ``plugins=[]`` once hid a 500 on the dashboard). A demo student opens the
home page, signs in on the login form, answers the consent page of an app that asks for every
scope, then opens the dashboard and every page in its navigation. Each page must answer 200 and
fit the window: the document may not be wider than the viewport, or a phone user scrolls
sideways to reach "Sign out". Screenshots go to test-artifacts/pages/ for a person to look at.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from campus_mcp.migrate import upgrade
from campus_mcp.oauth.testkit import TEST_REDIRECT_URI, callback_params, free_port, serve_on_loopback
from campus_mcp.registry import Registry, load_registry
from campus_mcp.testing import TestDatabases, harness_app
from campus_mcp.testing import test_settings as campus_settings

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "pages"
# One word longer than a phone is wide: a client names itself, and its name must still wrap.
APP_NAME = "ClaudeForStudentsOfTheWentworthInstituteOfTechnology"
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the page test in Chromium, but /usr/bin/chromium is missing.")
    pytest.skip(
        "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True
    )


class Site:
    """The campus served on loopback: its base URL and its registry."""

    def __init__(self, base: str, registry: Registry) -> None:
        self.base = base
        self.registry = registry

    async def connect(self) -> Connection:
        """A newly registered app whose consent page asks for every scope of the campus."""
        async with httpx.AsyncClient(timeout=30) as http:
            registered = await http.post(
                f"{self.base}/api/oauth/register",
                json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": APP_NAME},
            )
        client_id = registered.json()["client_id"]
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": TEST_REDIRECT_URI,
            "scope": " ".join(self.registry.scopes),
            "state": "pages",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": f"{self.base}/api/mcp",
        }
        return Connection(self.base, client_id, verifier, f"{self.base}/api/oauth/authorize?" + urlencode(query))


class Connection:
    """One app connecting: its consent page, and the token exchange once the student allowed it."""

    def __init__(self, base: str, client_id: str, verifier: str, authorize_url: str) -> None:
        self.base = base
        self.client_id = client_id
        self.verifier = verifier
        self.authorize_url = authorize_url

    async def exchange(self, callback_url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            token = await http.post(
                f"{self.base}/api/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": callback_params(callback_url)["code"],
                    "redirect_uri": TEST_REDIRECT_URI,
                    "client_id": self.client_id,
                    "code_verifier": self.verifier,
                },
            )
        assert token.status_code == 200, token.text


@pytest.fixture(scope="module")
async def site(campus_databases: TestDatabases) -> AsyncIterator[Site]:
    """Every installed plugin (the families and the dining example) on the demo campus."""
    port = free_port()
    url = await campus_databases.demo_copy()
    registry = load_registry(campus_settings(url, anonymous_access=False, public_url=f"http://127.0.0.1:{port}"))
    assert "dining" in registry.plugins, "the dining example must be installed for the page test"
    await asyncio.to_thread(upgrade, registry)
    app = harness_app(registry)
    try:
        async with serve_on_loopback(app, port) as base:
            yield Site(base, registry)
    finally:
        await app.state.deployment.engine.dispose()
        await campus_databases.drop(url)


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    """One Chromium for the module: launching it is the slow part."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
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
            yield launched
        finally:
            await launched.close()


async def check_page(page: Any, name: str, viewport: str) -> None:
    """The page fits the window (no sideways scrolling) and is saved for a person to look at."""
    width = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"{name}-{viewport}.png"), full_page=True)
    assert width[0] <= width[1], f"{name} at {viewport} width is {width[0]} px wide in a {width[1]} px window"


async def opened(page: Any, url: str) -> None:
    response = await page.goto(url)
    assert response is not None and response.status == 200, f"{url}: {response and response.status}"


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
async def test_every_page_answers_and_fits_the_window(site: Site, browser: Any, viewport: str) -> None:
    context = await browser.new_context(viewport=VIEWPORTS[viewport])
    try:
        page = await context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

        await opened(page, f"{site.base}/")
        await check_page(page, "home", viewport)

        # The consent page of an app that asks for every scope: the login form comes first.
        connection = await site.connect()
        await opened(page, connection.authorize_url)
        await page.get_by_label("Username").wait_for()
        await check_page(page, "login", viewport)
        await page.get_by_label("Username").fill("student1")
        await page.get_by_label("Password").fill("demo")
        async with page.expect_navigation() as signed_in:
            await page.get_by_role("button", name="Sign in").click()
        response = await signed_in.value
        assert response is not None and response.status == 200
        # Each permission in plain words ("Read your calendar settings"), its code small beside it.
        for scope in site.registry.scopes.values():
            if scope.always_on:
                heading = page.locator("p.always strong", has_text=scope.title)
            else:
                assert await page.get_by_role("checkbox", name=scope.title).count() == 1, scope.name
                heading = page.locator(f'label[for="scope-{scope.name}"]')
            assert await heading.locator(".scope-title").inner_text() == scope.title, scope.name
            assert await heading.locator("code").inner_text() == scope.name
        await check_page(page, "consent", viewport)
        # Allow, so that Settings lists the app with its permissions. Nothing listens on the app's
        # loopback redirect URI (Chromium refuses its port anyway): the request is all we wait for,
        # and the dashboard opens in a new tab of the same browser session.
        async with page.expect_request(lambda request: request.url.startswith(TEST_REDIRECT_URI)) as sent:
            await page.get_by_role("button", name="Allow").click()
        await connection.exchange((await sent.value).url)
        page = await context.new_page()
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

        await opened(page, f"{site.base}/dashboard")
        nav = page.get_by_role("navigation", name="Main").get_by_role("link")
        links = [str(await nav.nth(i).get_attribute("href")) for i in range(await nav.count())]
        assert links[:2] == ["/dashboard", "/dashboard/settings"], links
        for href in links:
            await opened(page, f"{site.base}{href}")
            await check_page(page, href.strip("/").replace("/", "-"), viewport)
        assert await page.get_by_role("button", name="Sign out").is_visible()
        # Plugin pages follow Settings in the navigation: go back to Settings for its Connected apps card.
        await opened(page, f"{site.base}/dashboard/settings")
        assert await page.get_by_role("button", name=f"Disconnect {APP_NAME}").count() >= 1
        assert not [e for e in errors if "Content Security Policy" in e], errors
    finally:
        await context.close()
