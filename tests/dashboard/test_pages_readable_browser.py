"""What a person sees on the dashboard's pages, measured in headless Chromium (issue 24, point 9).

At 1280 px no header, cell or button of My schedule breaks a word across lines ("CR / N",
"Rem / ove"), and the page opens on the term the tools answer for when none is named. Calendar
settings shows the kinds of class the student has, the others folded, and stays within a height
a person scrolls. Screenshots go to test-artifacts/pages/ for a person to look at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from campus_mcp.assembly.registry import Registry
from campus_mcp.testing import TestDatabases
from sqlalchemy import text

from tests.support.chromium import chromium, require_chromium, served_demo_campus

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "pages"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

require_chromium("the readable pages test")

# Every word of the visible text under ``selector`` that the layout split over two lines: a Range
# over one word has one client rectangle per line it is drawn on.
BROKEN_WORDS = """
(selector) => {
  const broken = [];
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      for (const match of text.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}
"""


@pytest.fixture(scope="module")
async def site(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, Registry]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


async def signed_in(browser: Any, base: str, path: str, viewport: dict[str, int]) -> Any:
    page = await (await browser.new_context(viewport=viewport)).new_page()
    await page.goto(f"{base}/login?next={path}")
    await page.get_by_label("Username").fill("student1")
    await page.get_by_label("Password").fill("demo")
    async with page.expect_navigation():
        await page.get_by_role("button", name="Sign in").click()
    assert page.url == f"{base}{path}"
    return page


async def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


async def test_my_schedule_breaks_no_word_and_opens_on_the_tools_term(site: tuple[str, Registry]) -> None:
    from campus_catalog.queries.terms import resolve_term
    from campus_mcp.base.db import make_engine, make_sessions

    base, registry = site
    engine = make_engine(registry.settings.database_url)
    try:
        async with make_sessions(engine)() as session:
            default = await resolve_term(session, None, registry.settings)
    finally:
        await engine.dispose()
    async with chromium() as browser:
        page = await signed_in(browser, base, "/dashboard/schedule", DESKTOP)
        await shot(page, "my-schedule-desktop")
        assert await page.get_by_role("heading", level=1).inner_text() == f"My schedule: {default.name}"
        assert await page.locator("main table th").count() >= 4
        assert await page.evaluate(BROKEN_WORDS, "main th, main td, main button, main nav") == []


async def test_calendar_settings_shows_the_students_kinds_and_stays_a_readable_height(
    site: tuple[str, Registry],
) -> None:
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_settings.levels import COMMON_KINDS, own_class_kinds

    base, registry = site
    engine = make_engine(registry.settings.database_url)
    try:
        async with make_sessions(engine)() as session:
            student1 = await session.scalar(text("SELECT id FROM students WHERE username = 'student1'"))
            own = await own_class_kinds(session, student1)
    finally:
        await engine.dispose()
    assert own and set(COMMON_KINDS) - set(own), "the demo student should have some kinds and not others"
    async with chromium() as browser:
        for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page = await signed_in(browser, base, "/dashboard/calendar-settings", viewport)
            await shot(page, f"calendar-settings-{name}")
            height = await page.evaluate("document.documentElement.scrollHeight")
            assert height <= 3200, (
                f"Calendar settings is {height} px tall at {name} width"
            )  # 3,000 before the pause end field (issue 39)
            width = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"Calendar settings is {width[0]} px wide in a {width[1]} px window"
            if name == "desktop":
                # The names a template can use sit beside the template fields, not pages away.
                field = await page.locator("#all_classes-title_template").bounding_box()
                names = await page.locator("#all_classes-vars").bounding_box()
                assert field is not None and names is not None
                assert names["x"] >= field["x"] + field["width"] and names["y"] < field["y"] + field["height"]
        # Each kind the student has is a heading of its own; the others are folded under one.
        headings = await page.locator("main details.level:not(.other-kinds details) > summary h2").all_inner_texts()
        for kind in own:
            assert f"{kind.replace('_', ' ').capitalize()} classes" in headings
        folded = page.locator("details.other-kinds")
        assert not await folded.get_attribute("open")
        for kind in set(COMMON_KINDS) - set(own):
            assert f"{kind.capitalize()} classes" not in headings
            assert kind in await folded.locator("> summary").inner_text()
        # All classes is open: its template fields have the names beside them, its color field swatches.
        assert await page.get_by_role("complementary", name="Names a template can use").first.is_visible()
        assert "{{course_code}}" in await page.locator("#all_classes-vars").inner_text()
        assert await page.locator("#all_classes-colors svg.swatch").count() == 11
