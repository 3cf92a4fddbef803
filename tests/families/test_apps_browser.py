"""The four apps in headless Chromium (issue 13, points 5 and 6), each fed a real tool result.

Each view is served by resources/read and put in a sandboxed iframe of a test host page that
speaks the host side of the MCP Apps protocol over postMessage (ui/initialize, the initialized
notification, tool input and result, host-context changes, cancellation, teardown, ping, size
changes) under the strictest CSP. The results come from the demo campus as a signed-in student.
One test drives a view with the official host bridge (npm @modelcontextprotocol/ext-apps).
Screenshots at desktop and phone width, light and dark, go to test-artifacts/apps/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from campus_mcp.testing import CampusHarness, campus_today

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "apps"
EXT_APPS_VERSION = "2.0.4"
ESBUILD_VERSION = "0.25.10"
WIDTHS = {"desktop": 1100, "phone": 390}
# Nothing may load: the page, the frame and the host script are all inline.
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the apps in Chromium, but /usr/bin/chromium is missing.")
    pytest.skip("Debian's chromium is not installed at /usr/bin/chromium", allow_module_level=True)

# The host side of the protocol, as a host page would speak it; every message is kept in hostLog.
HOST_SCRIPT = """
const frame = document.getElementById("app");
window.hostLog = [];
let nextId = 1000;
const pending = new Map();
function send(message) { frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*"); }
window.hostNotify = (method, params) => send({ method, params });
window.hostRequest = (method, params) => new Promise((resolve) => {
  const id = nextId++; pending.set(id, resolve); send({ id, method, params });
});
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data; window.hostLog.push(m);
  if (m.method === undefined) { const done = pending.get(m.id); if (done) { pending.delete(m.id); done(m); } return; }
  if (m.method === "ui/initialize") {
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, hostInfo: { name: "test host", version: "1" },
      hostCapabilities: {}, hostContext: window.HOST_CONTEXT } });
  } else if (m.method === "ui/notifications/initialized" && window.TOOL_RESULT) {
    send({ method: "ui/notifications/tool-input", params: { arguments: window.TOOL_INPUT } });
    send({ method: "ui/notifications/tool-result", params: window.TOOL_RESULT });
  }
});
"""


def host_page(view_html: str, result: dict[str, Any] | None, context: dict[str, Any], width: int) -> str:
    data = json.dumps({"result": result, "context": context}).replace("</", "<\\/")
    srcdoc = view_html.replace("&", "&amp;").replace('"', "&quot;")
    return (
        f'<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<style>html,body{margin:0;background:#888}iframe{border:0;display:block;background:transparent}</style></head>"
        f"<body><script>const DATA = {data}; window.TOOL_RESULT = DATA.result; window.TOOL_INPUT = {{}};"
        "window.HOST_CONTEXT = DATA.context;</script>"
        f'<iframe id="app" sandbox="allow-scripts" style="width:{width}px;height:2400px" srcdoc="{srcdoc}"></iframe>'
        f"<script>{HOST_SCRIPT}</script></body></html>"
    )


async def _result(harness: CampusHarness, username: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    student = await harness.student_principal(username)
    async with harness.mcp(principal=student) as client:
        result = await client.call_tool(tool, arguments)
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


async def _view(harness: CampusHarness, uri: str) -> str:
    async with harness.mcp() as client:
        text: str = (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
    return text


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def browser() -> Any:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        await launched.close()


class Shown:
    """One view in the test host page: the page, its frame, and what went over the network."""

    def __init__(self, page: Any, requests: list[str], errors: list[str]) -> None:
        self.page, self.requests, self.errors = page, requests, errors
        self.frame = page.frame_locator("#app")

    async def text(self) -> str:
        value: str = await self.frame.locator("main").inner_text()
        return value

    async def log(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = await self.page.evaluate("window.hostLog")
        return value


async def show(
    browser: Any,
    view_html: str,
    result: dict[str, Any] | None,
    *,
    theme: str = "light",
    width: int = 1100,
    **context: Any,
) -> Shown:
    page = await browser.new_page(viewport={"width": width, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    host_context = {"theme": theme, "styles": {"variables": {}}, "timeZone": "America/New_York", **context}
    await page.set_content(host_page(view_html, result, host_context, width))
    shown = Shown(page, requests, errors)
    if result is not None:
        await shown.frame.locator("main > div").first.wait_for()
    return shown


async def screenshots(browser: Any, name: str, view_html: str, result: dict[str, Any]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for label, width in WIDTHS.items():
        for theme in ("light", "dark"):
            shown = await show(browser, view_html, result, theme=theme, width=width)
            height = await shown.frame.locator("main").evaluate("e => e.getBoundingClientRect().bottom + 8")
            await shown.page.set_viewport_size({"width": width, "height": int(height)})
            await shown.page.locator("#app").evaluate(f"f => f.style.height = '{int(height)}px'")
            await shown.page.screenshot(path=str(ARTIFACTS / f"{name}-{label}-{theme}.png"))
            assert shown.requests == [] and shown.errors == [], (name, shown.requests, shown.errors)
            await shown.page.close()


async def test_week_grid_marks_the_conflict_of_check_schedule(demo_campus: CampusHarness, browser: Any) -> None:
    # ARCH 3500 meets MW 1:00-4:50 PM, ARCH 2600 MWF 1:00-1:50 PM: they overlap on Monday and Wednesday.
    result = await _result(demo_campus, "student1", "check_schedule", {"crns": ["10086", "10084", "10277"]})
    conflicts = result["structuredContent"]["conflicts"]
    assert conflicts, "the demo plan has a conflict"
    html = await _view(demo_campus, "ui://campus-mcp/week-grid")
    shown = await show(browser, html, result)
    marked = shown.frame.locator(".block[data-conflict]")
    assert await marked.count() >= 2
    assert {await b.get_attribute("data-crn") for b in await marked.all()} >= {"10086", "10084"}
    text = await shown.text()
    assert "ARCH 3500 and ARCH 2600 overlap" in text or "ARCH 2600 and ARCH 3500 overlap" in text
    assert "1:00 PM" in text and "13:00" not in text, "times in the 12-hour form"
    assert "Section data for Fall 2026 last refreshed" in text and demo_campus.settings.advisor_text in text
    assert shown.requests == [] and shown.errors == []
    await shown.page.close()
    await screenshots(browser, "week-grid", html, result)


async def test_a_lecture_and_its_lab_have_one_color(demo_campus: CampusHarness, browser: Any) -> None:
    result = await _result(demo_campus, "student1", "check_schedule", {"crns": ["10142", "10143"]})
    shown = await show(browser, await _view(demo_campus, "ui://campus-mcp/week-grid"), result)
    colors = [
        await shown.frame.locator(f'.block[data-crn="{crn}"]').first.evaluate(
            "e => getComputedStyle(e).backgroundColor"
        )
        for crn in ("10142", "10143")
    ]
    assert colors[0] == colors[1]
    await shown.page.close()


async def test_a_friends_busy_times_show_blocks_and_no_course(demo_campus: CampusHarness, browser: Any) -> None:
    result = await _result(
        demo_campus,
        "student1",
        "friend_busy_times",
        {"friend_id": 2, "start_date": "2026-12-07", "end_date": "2026-12-13"},
    )
    busy = result["structuredContent"]["busy"]
    assert busy
    friends_own = (await _result(demo_campus, "student2", "my_courses", {}))["structuredContent"]["courses"]
    html = await _view(demo_campus, "ui://campus-mcp/busy-times")
    shown = await show(browser, html, result)
    assert await shown.frame.locator(".slot[data-busy]").count() == len(busy)
    text = await shown.text()
    assert "Busy" in text
    for course in friends_own:
        for word in (course["course_code"], course["title"], course["crn"]):
            assert word not in text, f"a friend's course shows: {word}"
    await shown.page.close()
    await screenshots(browser, "busy-times", html, result)


async def test_the_catalog_lists_the_sections_of_search_sections_with_seats(
    demo_campus: CampusHarness, browser: Any
) -> None:
    result = await _result(demo_campus, "student1", "search_sections", {"subject": "CHEM", "course_number": "1100"})
    sections = result["structuredContent"]["sections"]
    html = await _view(demo_campus, "ui://campus-mcp/catalog")
    shown = await show(browser, html, result)
    rows = shown.frame.locator(".section[data-crn]")
    assert [await r.get_attribute("data-crn") for r in await rows.all()] == [s["crn"] for s in sections]
    for row, section in zip(await rows.all(), sections, strict=True):
        words = await row.locator(".seats").inner_text()
        assert f"of {section['capacity']} seats" in words
        assert (f"{section['open_seats']} open" if section["open_seats"] > 0 else "Full") in words
    await shown.page.close()
    await screenshots(browser, "catalog", html, result)


async def test_finals_are_listed_in_date_order(demo_campus: CampusHarness, browser: Any) -> None:
    result = await _result(demo_campus, "student1", "my_finals", {})
    finals = result["structuredContent"]["finals"]
    html = await _view(demo_campus, "ui://campus-mcp/finals")
    shown = await show(browser, html, result)
    crns = [await e.get_attribute("data-crn") for e in await shown.frame.locator(".exam").all()]
    expected = sorted(finals, key=lambda e: (e["date"], e["start"]))
    assert crns == [e["crn"] for e in expected]
    text = await shown.text()
    assert "The finals schedule for Fall 2026 was last loaded" in text
    await shown.page.close()
    await screenshots(browser, "finals", html, result)


CANNOT_DRAW: dict[str, tuple[dict[str, Any], str]] = {
    "error": ({"content": [{"type": "text", "text": "Unknown subject 'ZZZZ'."}], "isError": True}, "Unknown subject"),
    "older version": (
        {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"items": []}},
        "another version of Campus MCP",
    ),
    "text only": ({"content": [{"type": "text", "text": "Three sections."}]}, "without structured data"),
}


@pytest.mark.parametrize("case", list(CANNOT_DRAW))
@pytest.mark.parametrize("view", ["week-grid", "busy-times", "catalog", "finals"])
async def test_a_result_it_cannot_draw_is_said_in_words(
    demo_campus: CampusHarness, browser: Any, view: str, case: str
) -> None:
    result, words = CANNOT_DRAW[case]
    shown = await show(browser, await _view(demo_campus, f"ui://campus-mcp/{view}"), result)
    text = await shown.text()
    assert words in text and len(text.strip()) > 30
    await shown.page.close()


async def test_an_empty_list_and_a_real_error_are_said_in_words(demo_campus: CampusHarness, browser: Any) -> None:
    html = await _view(demo_campus, "ui://campus-mcp/catalog")
    empty = await _result(demo_campus, "student1", "search_sections", {"q": "qqqq zzzz xxxx"})
    assert empty["structuredContent"]["total"] == 0
    shown = await show(browser, html, empty)
    assert "No sections match." in await shown.text()
    await shown.page.close()
    error = await _result(demo_campus, "student1", "get_section", {"crn": "99999"})
    assert error.get("isError")
    shown = await show(browser, html, error)
    assert "The tool answered with an error." in await shown.text()
    await shown.page.close()


async def test_host_protocol_theme_variables_ping_cancel_teardown_size(
    demo_campus: CampusHarness, browser: Any
) -> None:
    html = await _view(demo_campus, "ui://campus-mcp/finals")
    shown = await show(browser, html, None, styles={"variables": {"--color-background-primary": "rgb(1, 2, 3)"}})
    await shown.frame.locator("text=Waiting for the result").wait_for()
    log = await shown.log()
    init = next(m for m in log if m.get("method") == "ui/initialize")
    assert init["params"]["protocolVersion"] == "2026-01-26"
    assert any(m.get("method") == "ui/notifications/initialized" for m in log)
    body = shown.frame.locator("body")
    assert await body.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(1, 2, 3)", "the host's variable"
    await shown.page.evaluate(
        "hostNotify('ui/notifications/host-context-changed',"
        " {theme: 'dark', styles: {variables: {'--color-background-primary': null}}})"
    )
    await shown.frame.locator("html[data-theme=dark]").wait_for()
    dark = await body.evaluate("e => getComputedStyle(e).backgroundColor")
    assert dark == "rgb(21, 23, 28)", f"our own dark value when the host gives none: {dark}"
    pong = await shown.page.evaluate("hostRequest('ping', {})")
    assert pong["result"] == {}
    await shown.page.evaluate("hostNotify('ui/notifications/tool-cancelled', {reason: 'The student stopped it.'})")
    await shown.frame.locator("text=The request was cancelled.").wait_for()
    assert "The student stopped it." in await shown.text()
    assert any(m.get("method") == "ui/notifications/size-changed" for m in await shown.log())
    done = await shown.page.evaluate("hostRequest('ui/resource-teardown', {})")
    assert done["result"] == {}
    assert shown.requests == [] and shown.errors == []
    await shown.page.close()


def _ext_apps_bundle() -> str | None:
    """The official host bridge bundled for the browser; None (skip) when npm cannot install it."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    folder = ROOT / ".node" / "ext-apps"
    bundle = folder / f"ext-apps-{EXT_APPS_VERSION}.js"
    if bundle.exists():
        return bundle.read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    install = [npm, "install", "--prefix", str(folder), "--save-exact", "--no-audit", "--no-fund", "--loglevel=error"]
    packages = [f"@modelcontextprotocol/ext-apps@{EXT_APPS_VERSION}", f"esbuild@{ESBUILD_VERSION}"]
    if subprocess.run([*install, *packages], capture_output=True, timeout=300).returncode != 0:
        return None
    entry = folder / "entry.js"
    entry.write_text('export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";\n')
    esbuild = folder / "node_modules" / ".bin" / "esbuild"
    built = subprocess.run(
        [str(esbuild), str(entry), "--bundle", "--format=iife", "--global-name=ExtApps", f"--outfile={bundle}"],
        capture_output=True,
        timeout=120,
    )
    return bundle.read_text(encoding="utf-8") if built.returncode == 0 else None


async def test_the_official_ext_apps_host_bridge_drives_the_week_grid(demo_campus: CampusHarness, browser: Any) -> None:
    bundle = _ext_apps_bundle()
    if bundle is None:
        pytest.skip(f"npm could not install @modelcontextprotocol/ext-apps@{EXT_APPS_VERSION} (no registry access)")
    result = await _result(demo_campus, "student1", "my_courses", {})
    html = await _view(demo_campus, "ui://campus-mcp/week-grid")
    srcdoc = html.replace("&", "&amp;").replace('"', "&quot;")
    driver = """
      const frame = document.getElementById("app");
      window.sizes = [];
      const bridge = new ExtApps.AppBridge(null, { name: "ext-apps reference host", version: "1" }, {},
        { hostContext: { theme: "dark", timeZone: "America/New_York" } });
      bridge.onsizechange = (size) => window.sizes.push(size);
      bridge.oninitialized = () => { bridge.sendToolInput({ arguments: {} }); bridge.sendToolResult(window.TOOL_RESULT); };
      bridge.connect(new ExtApps.PostMessageTransport(frame.contentWindow, frame.contentWindow));
      window.bridge = bridge;
    """
    page = await browser.new_page(viewport={"width": 1100, "height": 900})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    data = json.dumps(result).replace("</", "<\\/")
    inline_bundle = bundle.replace("</script", "<\\/script")
    await page.set_content(
        '<!doctype html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'\"></head><body>"
        f'<iframe id="app" sandbox="allow-scripts" style="width:1100px;height:1500px;border:0" srcdoc="{srcdoc}"></iframe>'
        f"<script>window.TOOL_RESULT = {data};</script><script>{inline_bundle}</script>"
        f"<script>{driver}</script></body></html>"
    )
    frame = page.frame_locator("#app")
    await frame.locator(".block").first.wait_for(timeout=15000)
    courses = result["structuredContent"]["courses"]
    assert {await b.get_attribute("data-crn") for b in await frame.locator(".block").all()} == {
        c["crn"] for c in courses if c["meetings"]
    }
    assert await frame.locator("html[data-theme=dark]").count() == 1
    await page.wait_for_function("window.sizes.length > 0")
    await page.evaluate("window.bridge.teardownResource({})")
    assert requests == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "week-grid-ext-apps-host.png"), full_page=True)
    await page.close()


# The visible labels under ``selector`` that a person cannot read whole at this width: two whose
# boxes overlap ("8 AM9 AM10 AM"), or one cut short by its block ("A…").
UNREADABLE = """
(main, selector) => {
  const shown = [...main.querySelectorAll(selector)].filter((e) => e.getClientRects().length && e.offsetWidth);
  const boxes = shown.map((e) => [e, e.getBoundingClientRect()]);
  const found = [];
  for (let i = 0; i < boxes.length; i++) {
    const [e, r] = boxes[i];
    if (e.scrollWidth > e.clientWidth + 1) found.push(`cut: ${e.textContent}`);
    const block = e.closest(".block, .slot");
    if (block) {
      const b = block.getBoundingClientRect();
      if (r.right > b.right + 1 || r.bottom > b.bottom + 1) found.push(`outside its block: ${e.textContent}`);
    }
    for (let j = i + 1; j < boxes.length; j++) {
      const o = boxes[j][1];
      if (r.left < o.right - 1 && o.left < r.right - 1 && r.top < o.bottom - 1 && o.top < r.bottom - 1) {
        found.push(`overlap: ${e.textContent} / ${boxes[j][0].textContent}`);
      }
    }
  }
  return found;
}
"""


async def test_the_week_grid_and_busy_strip_read_at_phone_width(demo_campus: CampusHarness, browser: Any) -> None:
    """Issue 24, point 9: at 390 px the grid's blocks said "A…" and "1:…", the strip's hour labels
    ran together, and the busy strip's footer showed a raw key (university_calendar)."""
    plan = await _result(demo_campus, "student1", "check_schedule", {"crns": ["10086", "10084", "10277"]})
    grid = await show(browser, await _view(demo_campus, "ui://campus-mcp/week-grid"), plan, width=390)
    assert await grid.frame.locator(".block b").count() >= 6
    await grid.page.screenshot(path=str(ARTIFACTS / "week-grid-phone-measured.png"))
    assert await grid.frame.locator("main").evaluate(UNREADABLE, ".block b") == []
    await grid.page.close()

    week = {"start_date": "2026-12-07", "end_date": "2026-12-13"}
    mine = await _result(demo_campus, "student1", "my_busy_times", week)
    friend = await _result(demo_campus, "student1", "friend_busy_times", {"friend_id": 2, **week})
    html = await _view(demo_campus, "ui://campus-mcp/busy-times")
    for result in (mine, friend):
        strip = await show(browser, html, result, width=390)
        assert await strip.frame.locator("main").evaluate(UNREADABLE, ".ticks .line span, .slot b") == []
        assert (
            await strip.frame.locator(".ticks .line span").evaluate_all("s => s.filter(e => e.offsetWidth).length") >= 4
        )
        text = await strip.text()
        assert "university_calendar" not in text and "_" not in text.split("Campus MCP is not")[-1]
        await strip.page.close()
    assert any(
        source["key"] == "university_calendar" for source in mine["structuredContent"]["advisory"]["data_sources"]
    )


async def test_a_meeting_shows_its_own_title_from_its_fenced_field(demo_campus: CampusHarness, browser: Any) -> None:
    # Issue 30: a meeting's title comes as meeting_title.untrusted_text (title says "Meeting");
    # the busy strip shows the student's title as text.
    monday = campus_today() - timedelta(days=campus_today().weekday())
    week = {"start_date": monday.isoformat(), "end_date": (monday + timedelta(days=6)).isoformat()}
    mine = await _result(demo_campus, "student1", "my_busy_times", week)
    meetings = [b for b in mine["structuredContent"]["busy"] if b["kind"] == "meeting"]
    assert [b["meeting_title"] for b in meetings] == [{"untrusted_text": "Study group"}]
    strip = await show(browser, await _view(demo_campus, "ui://campus-mcp/busy-times"), mine)
    assert "Study group" in await strip.text()
    await strip.page.close()
