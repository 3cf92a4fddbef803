"""The Canvas family's test fixtures: one fake Canvas served on loopback per test module, reset
before each test, and campuses configured for it whose demo student connects through the real
OAuth2 flow of the Canvas page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from campus_mcp import utcnow
from campus_mcp.testing import CampusFactory, CampusHarness, StudentBrowser
from sqlalchemy import text

from .fake_canvas import CLIENT_ID, CLIENT_SECRET, FakeCanvas, serve_fake_canvas

WEEK = {"start_date": "2030-09-09", "end_date": "2030-09-15"}  # the fixtures' week (Monday to Sunday)
STUDENTS = ("student1", "student2")
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def pytest_configure(config: pytest.Config) -> None:
    # The repository's marker for tests CI's PostgreSQL pass leaves out (tests/conftest.py), named here
    # too so the family's tests run alone without an unknown-marker warning.
    config.addinivalue_line("markers", "once: asserts a browser's page; its database side is proven elsewhere")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served_canvas() -> AsyncIterator[FakeCanvas]:
    async with serve_fake_canvas(FakeCanvas()) as fake:
        yield fake


@pytest.fixture
def canvas(served_canvas: FakeCanvas) -> FakeCanvas:
    served_canvas.reset()
    return served_canvas


def canvas_settings(fake: FakeCanvas, **more: Any) -> dict[str, Any]:
    return {"base_url": fake.origin, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET} | more


async def canvas_campus(
    campus_factory: CampusFactory,
    fake: FakeCanvas,
    *,
    canvas: dict[str, Any] | None = None,
    plugins: tuple[str, ...] = ("canvas",),
    **overrides: Any,
) -> CampusHarness:
    """A campus of ``plugins`` (a copy of their migrated template) with the Canvas family configured for
    ``fake`` and two demo students, who sign in with the demo password; nobody connected to Canvas."""
    campus = await campus_factory(
        plugins=list(plugins), plugin_settings={"canvas": canvas_settings(fake, **(canvas or {}))}, **overrides
    )
    async with campus.sessions() as session:
        for username in STUDENTS:
            await session.execute(
                text(
                    "INSERT INTO students (username, display_name, is_demo, created_at, session_generation) "
                    "VALUES (:u, :d, true, :now, 0)"
                ),
                {"u": username, "d": username.title(), "now": utcnow()},
            )
        await session.commit()
    return campus


def csrf_of(page: str) -> str:
    found = CSRF.search(page)
    assert found is not None, "the page has no form"
    return found.group(1)


async def connect(browser: StudentBrowser, fake: FakeCanvas) -> Any:
    """The Canvas page's Connect, Canvas's approval, and the callback, as a browser follows them."""
    import httpx

    fake.approve = True
    page = await browser.get("/dashboard/canvas")
    started = await browser.post(
        "/dashboard/canvas/connect", data={"csrf_token": csrf_of(page.text)}, follow_redirects=False
    )
    assert started.status_code == 303, started.text
    async with httpx.AsyncClient() as canvas_side:
        approved = await canvas_side.get(started.headers["location"])
    assert approved.status_code == 302, approved.text
    fake.approve = False
    # Canvas sends the browser back to the campus's callback (an absolute URL of the campus).
    return await browser.get(approved.headers["location"])


async def student_id(campus: CampusHarness, username: str = "student1") -> int:
    principal = await campus.student_principal(username)
    assert principal.user_id is not None
    return principal.user_id
