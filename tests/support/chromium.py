"""Headless Chromium for the page tests (Debian's ``/usr/bin/chromium``, driven by Playwright).

Page tests skip without it on a developer's machine, but CI must run them: there a missing
browser is an error, not a skip.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

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
