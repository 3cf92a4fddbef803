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
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.testing import TestDatabases, harness_app
from campus_mcp.testing import test_settings as campus_settings
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    AuthorizationRequest,
    authorization_request,
    exchange_code,
    free_port,
    register_app,
    serve_on_loopback,
)

from tests.support.chromium import chromium, require_chromium

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "pages"
# One word longer than a phone is wide: a client names itself, and its name must still wrap.
APP_NAME = "ClaudeForStudentsOfTheWentworthInstituteOfTechnology"
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}

require_chromium("the page test")


class Site:
    """The campus served on loopback: its base URL and its registry."""

    def __init__(self, base: str, registry: Registry) -> None:
        self.base = base
        self.registry = registry

    async def connect(self) -> AuthorizationRequest:
        """A newly registered app whose consent page asks for every scope of the campus."""
        async with httpx.AsyncClient(timeout=30) as http:
            client_id = await register_app(http, self.base, APP_NAME)
        return authorization_request(self.base, client_id, " ".join(self.registry.scopes), state="pages")

    async def exchange(self, connection: AuthorizationRequest, callback_url: str) -> None:
        """The app's token exchange once the student allowed it (without the resource parameter)."""
        async with httpx.AsyncClient(timeout=30) as http:
            token = await exchange_code(http, connection, callback_url, send_resource=False)
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
    async with chromium() as launched:
        yield launched


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
        await opened(page, connection.url)
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
        await site.exchange(connection, (await sent.value).url)
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
