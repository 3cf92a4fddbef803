"""my_courses queues the refresh of its stale sections when the catalog reads Banner live, and
skips the catalog's queue when it does not (seed 000 "Old section data"; issue 36: the schedule
family asks the queue only when there is a Banner to read)."""

from __future__ import annotations

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
from campus_schedule.models import Enrollment
from sqlalchemy import select, update

from .conftest import add_students

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
STALE = datetime.now(UTC) - timedelta(hours=40)
CRN = "45405"


def fixture_sections() -> list[dict[str, Any]]:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    return sections


async def enrolled_campus(campus_factory: CampusFactory) -> tuple[CampusHarness, int]:
    """A campus of the Banner fixture's term (running now), its sections last read 40 hours ago,
    and a student who takes CRN 45405."""
    campus = await campus_factory(plugins=["catalog", "schedule"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    today = campus_today()
    async with campus.sessions() as session:
        await session.execute(
            update(Term).values(start_date=today - timedelta(days=5), end_date=today + timedelta(days=90))
        )
        await session.execute(update(Section).values(banner_synced_at=STALE))
        student = (await add_students(session))["student1"]
        section = await session.scalar(select(Section).where(Section.crn == CRN))
        assert section is not None
        term = await session.scalar(select(Term.uid).where(Term.id == section.term_id))
        session.add(Enrollment(student_id=student, term_uid=term, section_id=section.id, crn=CRN, source="student"))
        await session.commit()
    return campus, student


async def queued(campus: CampusHarness) -> list[str]:
    async with campus.sessions() as session:
        return sorted((await session.scalars(select(SectionRefreshKey.crn))).all())


async def test_my_courses_queues_its_stale_sections_when_banner_is_read_live(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url:
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE", "6000")
        monkeypatch.delenv("CAMPUS_MCP_CATALOG_BANNER_FILE", raising=False)
        campus, student = await enrolled_campus(campus_factory)
        async with campus.mcp(user_id=student) as client:
            result = await client.call_tool("my_courses", {})
        assert not result.is_error and result.structured_content is not None
        assert [c["crn"] for c in result.structured_content["courses"]] == [CRN]
        assert await queued(campus) == [CRN]
        await refresher_for(campus.sessions, campus.deployment.plugin_settings("catalog")).drain()


async def test_my_courses_queues_nothing_without_a_live_banner(campus_factory: CampusFactory) -> None:
    fixture_sections()  # the same campus: skipped with the fixture missing
    campus, student = await enrolled_campus(campus_factory)
    async with campus.mcp(user_id=student) as client:
        result = await client.call_tool("my_courses", {})
    assert not result.is_error and result.structured_content is not None
    assert [c["crn"] for c in result.structured_content["courses"]] == [CRN]
    assert await queued(campus) == []
