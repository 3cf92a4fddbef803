"""get_section and check_schedule queue the stale-section refresh, answer at once, and still
answer when Banner fails (seed 000, "Old section data"), seen through the MCP client."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import Section, Term
from campus_catalog.refresh_queue import SectionRefreshKey, refresher_for
from campus_catalog.sources.banner_sync import import_banner_file
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_mcp.testing import CampusFactory, CampusHarness, campus_today
from sqlalchemy import select, update

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
STALE = datetime.now(UTC) - timedelta(hours=40)


def fixture_sections() -> list[dict[str, Any]]:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    return sections


async def live_campus(campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch, url: str) -> CampusHarness:
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE", "6000")
    monkeypatch.delenv("CAMPUS_MCP_CATALOG_BANNER_FILE", raising=False)
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    today = campus_today()
    async with campus.sessions() as session:
        await session.execute(
            update(Term).values(start_date=today - timedelta(days=5), end_date=today + timedelta(days=90))
        )
        await session.execute(update(Section).values(banner_synced_at=STALE))
        await session.commit()
    return campus


async def synced_at(campus: CampusHarness, crn: str) -> datetime | None:
    async with campus.sessions() as session:
        return await session.scalar(select(Section.banner_synced_at).where(Section.crn == crn))


async def queued(campus: CampusHarness) -> list[str]:
    async with campus.sessions() as session:
        return sorted((await session.scalars(select(SectionRefreshKey.crn))).all())


async def test_get_section_answers_first_and_refreshes_behind(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    banner_answers = asyncio.Event()
    fake = FakeBanner(sections=fixture_sections(), held=banner_answers)
    async with serve_fake_banner(fake) as url:
        campus = await live_campus(campus_factory, monkeypatch, url)
        async with campus.mcp() as client:
            result = await client.call_tool("get_section", {"crn": "45405", "term": "202131"})
        assert not result.is_error and result.structured_content is not None
        # The answer is the data as it was: Banner has not even answered yet.
        assert result.structured_content["crn"] == "45405"
        assert await queued(campus) == ["45405"]
        assert await synced_at(campus, "45405") == STALE
        banner_answers.set()
        await refresher_for(campus.sessions, campus.deployment.plugin_settings("catalog")).drain()
    refreshed = await synced_at(campus, "45405")
    assert refreshed is not None and refreshed > STALE + timedelta(hours=39)


async def test_check_schedule_queues_each_stale_section_and_still_answers_when_banner_fails(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBanner(sections=fixture_sections(), fail={"searchResults/getFacultyMeetingTimes": 500})
    async with serve_fake_banner(fake) as url:
        campus = await live_campus(campus_factory, monkeypatch, url)
        crns = [s["courseReferenceNumber"] for s in fixture_sections()[:3]]
        async with campus.mcp() as client:
            result = await client.call_tool("check_schedule", {"crns": crns, "term": "202131"})
        assert not result.is_error, result.content
        assert await queued(campus) == sorted(crns)
        await refresher_for(campus.sessions, campus.deployment.plugin_settings("catalog")).drain()
        # The failure is on record; the next call within 6 hours does not hammer Banner again.
        [run] = await campus.job_runs("catalog.section_refresh")
        assert run.outcome == "partial" and set(run.lost) == {f"CRN {c}" for c in crns}
        seen = len(fake.seen)
        async with campus.mcp() as client:
            again = await client.call_tool("check_schedule", {"crns": crns, "term": "202131"})
        assert not again.is_error
        assert len(fake.seen) == seen
