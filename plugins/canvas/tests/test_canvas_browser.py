"""End to end: a student connects Canvas in headless Chromium (Settings' Connected apps, the Canvas
page, Canvas's Authorize page, back), then an MCP client (the SDK's, over HTTP) holding a token with
the family's scope answers "what's due this week?" and "what's my grade in calculus?".

The campus and the fake Canvas are real servers on loopback; the token is the one ``campus-mcp
token`` prints. Without Debian's Chromium the test is skipped on a developer's machine and fails in
CI (``CI`` set), which must run it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from campus_mcp.testing import CampusFactory, CampusHarness, cli_main, free_port
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import WEEK, canvas_campus, canvas_settings
from .fake_canvas import FakeCanvas

# once: CI's PostgreSQL pass leaves it out (the repository's tests/conftest.py); what it asserts is
# made in Chromium and on the wire, and its database side (the connection's rows, the tokens, the
# tools' reads) is test_canvas_tokens.py's, test_canvas_connection.py's and test_canvas_tools.py's,
# which that pass runs.
pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.once]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"CI must run the Canvas connection in Chromium, but {CHROMIUM} is missing.")
    pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}", allow_module_level=True)


@contextlib.asynccontextmanager
async def served(campus: CampusHarness, port: int) -> AsyncIterator[str]:
    """The campus's app on 127.0.0.1:``port`` (its public URL), with its lifespan, on this loop."""
    server = uvicorn.Server(uvicorn.Config(campus.app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


def token_for(campus: CampusHarness, canvas: FakeCanvas) -> str:
    """What ``campus-mcp token --student student1 --scopes canvas:read`` prints for this campus."""
    env = {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_SECRET_KEY": campus.settings.secret_key.get_secret_value(),
        "CAMPUS_MCP_PUBLIC_URL": campus.settings.public_url,
        "CAMPUS_MCP_PLUGINS": "canvas",
        **{f"CAMPUS_MCP_CANVAS_{key.upper()}": str(value) for key, value in canvas_settings(canvas).items()},
    }
    result = CliRunner().invoke(cli_main, ["token", "--student", "student1", "--scopes", "canvas:read"], env=env)
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


async def test_a_student_connects_canvas_in_the_browser_then_an_mcp_client_answers_from_it(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    from playwright.async_api import async_playwright

    port = free_port()
    campus = await canvas_campus(campus_factory, canvas, public_url=f"http://127.0.0.1:{port}", anonymous_access=False)
    async with served(campus, port) as base, async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = await browser.new_page()
            await page.goto(f"{base}/login?next=/dashboard/settings")
            await page.get_by_label("Username").fill("student1")
            await page.get_by_label("Password").fill("demo")
            async with page.expect_navigation():
                await page.get_by_role("button", name="Sign in").click()
            # Settings' Connected apps offers Canvas before anything is connected.
            async with page.expect_navigation():
                await page.get_by_role("link", name="Connect Canvas").click()
            assert page.url == f"{base}/dashboard/canvas"
            async with page.expect_navigation():
                await page.get_by_role("button", name="Connect Canvas").click()
            # Canvas's own page, on Canvas's origin: the student allows access there.
            assert page.url.startswith(f"{canvas.origin}/login/oauth2/auth?")
            assert await page.title() == "Authorize Campus MCP"
            async with page.expect_navigation(url=f"{base}/dashboard/canvas?done=connected"):
                await page.get_by_role("link", name="Authorize").click()
            said = await page.locator("main").inner_text()
            assert "Your Canvas account is connected" in said and "Connected as Jimi Hendrix" in said
            await page.goto(f"{base}/dashboard/settings")
            assert "Connected as Jimi Hendrix" in await page.locator("#connected-apps").inner_text()
        finally:
            await browser.close()

        token = await asyncio.to_thread(token_for, campus, canvas)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(f"{base}/api/mcp", http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
        ):
            tools = {tool.name for tool in (await client.list_tools()).tools}
            due: Any = await client.call_tool("canvas_due_work", WEEK)
            grade: Any = await client.call_tool("canvas_grades", {"course": "calculus"})
    assert {"canvas_due_work", "canvas_grades"} <= tools
    assert not due.is_error and due.structured_content["count"] == 9
    assert due.structured_content["items"][4]["due_text"] == "Wednesday, September 11, 11:59 PM"
    assert not grade.is_error
    [calculus] = grade.structured_content["courses"]
    assert (calculus["course"]["name"], calculus["current_score"], calculus["current_grade"]) == (
        "Calculus I",
        87.5,
        "B+",
    )
