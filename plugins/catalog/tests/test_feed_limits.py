"""The catalog reads each upstream document up to its limit, never whole (issue 35, point 14).

A loopback server answers the academic calendar feed and a Banner searchResults page with 60 MB,
streamed from one reused chunk: the scheduled jobs record the run with what was too large, its
limit and the setting that raises it, the server sent little more than the limit before the
catalog hung up, and nothing was stored. The real academic calendar, gzipped as a web server
sends it, is read and stored whole (150 events).
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import Section, UniversityEvent
from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp.testing import CampusFactory
from litestar import Litestar, Response, get, post
from litestar.response import Stream
from sqlalchemy import func, select

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
CALENDAR_FIXTURE = FIXTURES / "academic-calendar-princeton-2022-2023.ics"
MB = 1024 * 1024
CHUNK = b" " * (64 * 1024)
HUGE = 60 * MB
# What the sockets held when the catalog hung up (the kernel's buffers on loopback grow to several
# MB): a server that sent the limit and this stopped early, not at 60 MB.
IN_FLIGHT = 20 * MB


class Upstream:
    """A campus's calendar feed and Banner, each answer as ``answers`` says; counts what it sent."""

    def __init__(self) -> None:
        self.sent = 0
        self.calendar = b""

    async def stream(self, prefix: bytes) -> AsyncIterator[bytes]:
        yield prefix
        self.sent = len(prefix)
        while self.sent < HUGE:
            await asyncio.sleep(0)  # a turn of the loop: the server hears the catalog hang up
            self.sent += len(CHUNK)
            yield CHUNK

    def app(self) -> Litestar:
        @get("/calendar.ics")
        async def calendar() -> Any:
            if self.calendar:
                headers = {"Content-Encoding": "gzip"}
                return Response(self.calendar, headers=headers, media_type="text/calendar")
            return Stream(self.stream(b"BEGIN:VCALENDAR\r\nX-PADDING:"), media_type="text/calendar")

        @get("/ssb/classSearch/getTerms")
        async def terms() -> list[dict[str, str]]:
            return [{"code": "202710", "description": "Fall 2026"}]

        @post("/ssb/term/search", status_code=200)
        async def select_term() -> dict[str, Any]:
            return {"fwdURL": "/ssb/classSearch/classSearch"}

        @get("/ssb/searchResults/searchResults")
        async def search() -> Stream:
            return Stream(self.stream(b'{"success": true, "totalCount": 500, "data": [{"padding": "'))

        return Litestar([calendar, terms, select_term, search])


@pytest.fixture
async def upstream(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Upstream, str]]:
    for name in ("BANNER_FILE", "CALENDAR_FILE", "PROGRAMS_URL", "PROGRAMS_FILE", "ELECTIVES_URL", "ELECTIVES_FILE"):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    server = Upstream()
    async with serve_on_loopback(server.app()) as origin:
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_CALENDAR_URL", f"{origin}/calendar.ics")
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", f"{origin}/ssb")
        yield server, origin


async def test_a_calendar_feed_past_its_limit_is_refused_and_recorded(
    campus_factory: CampusFactory, upstream: tuple[Upstream, str]
) -> None:
    server, origin = upstream
    campus = await campus_factory(plugins=["catalog"])
    run = await campus.run_job(campus.registry.jobs["catalog.calendar_import"])
    assert run.outcome == "failed", run
    assert run.error is not None
    assert f"calendar feed at {origin}/calendar.ics is larger than 8 MB, the most this server reads of it" in run.error
    assert "raise CAMPUS_MCP_CATALOG_FEED_MAX_BYTES" in run.error
    assert server.sent < 8 * MB + IN_FLIGHT, server.sent  # of 60 MB: the limit, and what was in flight
    async with campus.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(UniversityEvent)) == 0


async def test_a_gzipped_calendar_is_read_whole(campus_factory: CampusFactory, upstream: tuple[Upstream, str]) -> None:
    if not CALENDAR_FIXTURE.is_file():
        pytest.skip(f"the calendar fixture is not at {CALENDAR_FIXTURE} (../shared/fixtures of the project root)")
    server, _ = upstream
    server.calendar = gzip.compress(CALENDAR_FIXTURE.read_bytes())
    campus = await campus_factory(plugins=["catalog"])
    run = await campus.run_job(campus.registry.jobs["catalog.calendar_import"])
    assert (run.outcome, run.items) == ("ok", 150), run


async def test_a_banner_page_past_its_limit_is_refused_and_recorded(
    campus_factory: CampusFactory, upstream: tuple[Upstream, str]
) -> None:
    server, origin = upstream
    campus = await campus_factory(plugins=["catalog"])
    before = await _sections(campus)
    run = await campus.run_job(campus.registry.jobs["catalog.sections_sync"])
    lost = run.lost.get("term 202710", "")
    assert lost.startswith(
        f"too_large: a Banner answer at {origin}/ssb/searchResults/searchResults is larger than 16 MB"
    ), run
    assert "raise CAMPUS_MCP_CATALOG_BANNER_PAGE_MAX_BYTES" in lost and "final" in lost
    assert server.sent < 16 * MB + IN_FLIGHT, server.sent
    assert await _sections(campus) == before  # nothing of the term was taken from half a page


async def _sections(campus: Any) -> int:
    async with campus.sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(Section)) or 0)
