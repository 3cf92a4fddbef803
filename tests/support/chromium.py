"""Headless Chromium for the page tests (Debian's ``/usr/bin/chromium``, driven by Playwright).

Page tests skip without it on a developer's machine, but CI must run them: there a missing
browser is an error, not a skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.testing import TestDatabases, harness_app
from campus_mcp.testing import test_settings as campus_settings
from campus_mcp.testing.oauth import free_port, serve_on_loopback

CHROMIUM = Path("/usr/bin/chromium")
# No sandbox (the test runs as the container's user), and nothing Chromium would fetch by itself.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_chromium(what: str) -> None:
    """At a test module's top: skip the module without Chromium, or fail in CI, which must run ``what``."""
    if CHROMIUM.exists():
        return
    if os.environ.get("CI"):
        raise RuntimeError(f"CI must run {what} in Chromium, but {CHROMIUM} is missing.")
    pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A launched headless Chromium (Playwright's ``Browser``), closed at the end of the block."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@contextlib.asynccontextmanager
async def served_demo_campus(databases: TestDatabases) -> AsyncIterator[tuple[str, Registry]]:
    """The demo campus with every installed family, signed-in only, served on a loopback port for
    a browser: its base URL and registry. Its database goes at the end of the block."""
    port = free_port()
    url = await databases.demo_copy()
    registry = load_registry(campus_settings(url, anonymous_access=False, public_url=f"http://127.0.0.1:{port}"))
    await asyncio.to_thread(upgrade, registry)
    app = harness_app(registry)
    try:
        async with serve_on_loopback(app, port) as base:
            yield base, registry
    finally:
        await app.state.deployment.engine.dispose()
        await databases.drop(url)


async def fits(page: Any) -> None:
    """The page is no wider than its window (no sideways scrolling at phone width)."""
    width = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page is {width[0]} px wide in a {width[1]} px window"
