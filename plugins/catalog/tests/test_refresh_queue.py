"""The stale-section refresh queue: one test per rule of seed 000 "Old section data"."""

from __future__ import annotations

import asyncio
import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Section, Term
from campus_catalog.refresh_queue import (
    REFRESH_LIMIT,
    SectionRefresher,
    SectionRefreshKey,
    queue_refreshes,
)
from campus_catalog.sources.banner_sync import import_banner_file
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_mcp.testing import CampusFactory, CampusHarness, JobRunRecord, campus_today
from sqlalchemy import select, update
from sqlalchemy.orm import selectinload

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
ZONE = "America/New_York"
NOW = datetime.now(UTC)
TERM = "202131"


def fixture_sections() -> list[dict[str, Any]]:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    return sections


async def current_campus(campus_factory: CampusFactory, *, synced_hours_ago: float = 40) -> CampusHarness:
    """The fixture's term made current, every section last read from Banner ``synced_hours_ago``."""
    fixture_sections()  # skips without the fixture
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    today = campus_today()
    async with campus.sessions() as session:
        await session.execute(
            update(Term).values(start_date=today - timedelta(days=20), end_date=today + timedelta(days=90))
        )
        await session.execute(update(Section).values(banner_synced_at=NOW - timedelta(hours=synced_hours_ago)))
        await session.commit()
    return campus


def refs(crns: list[str]) -> list[tuple[str, str]]:
    return [(TERM, crn) for crn in crns]


def all_crns() -> list[str]:
    return [s["courseReferenceNumber"] for s in fixture_sections()]


def catalog_for(url: str) -> CatalogSettings:
    return CatalogSettings(banner_url=url, allow_loopback_http=True, banner_requests_per_minute=6000)


async def keys(campus: CampusHarness) -> list[tuple[str, str]]:
    async with campus.sessions() as session:
        return sorted((k.term_uid, k.crn) for k in await session.scalars(select(SectionRefreshKey)))


async def stored(campus: CampusHarness, crn: str) -> Section:
    async with campus.sessions() as session:
        found = await session.scalar(
            select(Section).where(Section.crn == crn).options(selectinload(Section.meeting_times))
        )
        assert found is not None
        return found


async def runs(campus: CampusHarness) -> list[JobRunRecord]:
    return await campus.job_runs("catalog.section_refresh")


async def test_a_call_queues_at_most_30_sections(campus_factory: CampusFactory) -> None:
    campus = await current_campus(campus_factory)
    fake = FakeBanner(sections=fixture_sections())
    crns = all_crns()[:40]
    async with serve_fake_banner(fake) as url:
        refresher = SectionRefresher(campus.sessions, catalog_for(url))
        queued = await queue_refreshes(campus.sessions, refresher, refs(crns), timezone=ZONE)
        await refresher.drain()
    assert queued == crns[:REFRESH_LIMIT] and REFRESH_LIMIT == 30
    assert len(await keys(campus)) == 30
    assert len(fake.seen) == 30  # one getFacultyMeetingTimes each, nothing else
    assert {r.endpoint for r in fake.seen} == {"searchResults/getFacultyMeetingTimes"}
    refreshed = await stored(campus, crns[0])
    assert refreshed.banner_synced_at is not None and refreshed.banner_synced_at > NOW - timedelta(minutes=5)


async def test_a_key_blocks_requeueing_for_6_hours_also_when_banner_gives_nothing(
    campus_factory: CampusFactory,
) -> None:
    campus = await current_campus(campus_factory)
    fake = FakeBanner(sections=[])  # Banner answers, but with no meetings for the CRN
    crn = all_crns()[0]
    async with serve_fake_banner(fake) as url:
        refresher = SectionRefresher(campus.sessions, catalog_for(url))
        assert await queue_refreshes(campus.sessions, refresher, refs([crn]), timezone=ZONE, now=NOW) == [crn]
        await refresher.drain()
        # Banner gave nothing, so the section is as stale as before ...
        synced = (await stored(campus, crn)).banner_synced_at
        assert synced is not None and synced < NOW - timedelta(hours=36)
        # ... and still it is not queued again within 6 hours,
        later = NOW + timedelta(hours=5, minutes=59)
        assert await queue_refreshes(campus.sessions, refresher, refs([crn]), timezone=ZONE, now=later) == []
        # but it is once the key has expired.
        after = NOW + timedelta(hours=6, minutes=1)
        assert await queue_refreshes(campus.sessions, refresher, refs([crn]), timezone=ZONE, now=after) == [crn]
        await refresher.drain()
    assert len(fake.seen) == 2


async def test_a_past_term_a_cancelled_section_and_a_fresh_section_are_not_queued(
    campus_factory: CampusFactory,
) -> None:
    campus = await current_campus(campus_factory)
    crns = all_crns()
    cancelled, fresh, stale = crns[0], crns[1], crns[2]
    async with campus.sessions() as session:
        await session.execute(update(Section).where(Section.crn == cancelled).values(cancelled=True))
        await session.execute(
            update(Section).where(Section.crn == fresh).values(banner_synced_at=NOW - timedelta(hours=35))
        )
        await session.commit()
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url:
        refresher = SectionRefresher(campus.sessions, catalog_for(url))
        assert await queue_refreshes(
            campus.sessions, refresher, refs([cancelled, fresh, stale]), timezone=ZONE, now=NOW
        ) == [stale]
        await refresher.drain()
        # The same term once it has ended: the nightly sync leaves past terms out, so does the queue.
        async with campus.sessions() as session:
            await session.execute(update(Term).values(end_date=campus_today() - timedelta(days=1)))
            await session.commit()
        assert await queue_refreshes(campus.sessions, refresher, refs(crns[3:10]), timezone=ZONE, now=NOW) == []
    assert await keys(campus) == [(TERM, stale)]


async def test_when_queueing_fails_the_keys_are_removed_and_the_failure_recorded(
    campus_factory: CampusFactory,
) -> None:
    campus = await current_campus(campus_factory)
    crns = all_crns()[:3]
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url:
        full = SectionRefresher(campus.sessions, catalog_for(url))
        full.queue = asyncio.Queue(maxsize=1)
        full.queue.put_nowait([])  # the worker is busy elsewhere: the queue is full
        assert await queue_refreshes(campus.sessions, full, refs(crns), timezone=ZONE, now=NOW) == []
        assert await keys(campus) == []
        [failure] = await runs(campus)
        assert failure.outcome == "failed" and failure.error is not None and "QueueFull" in failure.error
        assert set(failure.lost) == {f"CRN {c}" for c in crns}
        # The next call tries again.
        working = SectionRefresher(campus.sessions, catalog_for(url))
        assert await queue_refreshes(campus.sessions, working, refs(crns), timezone=ZONE, now=NOW) == crns
        await working.drain()


async def test_the_answer_does_not_wait_for_the_refresh(campus_factory: CampusFactory) -> None:
    campus = await current_campus(campus_factory)
    crn = all_crns()[0]
    banner_answers = asyncio.Event()
    fake = FakeBanner(sections=fixture_sections(), held=banner_answers)
    async with serve_fake_banner(fake) as url:
        refresher = SectionRefresher(campus.sessions, catalog_for(url))
        queued = await queue_refreshes(campus.sessions, refresher, refs([crn]), timezone=ZONE)
        # Returned with the refresh still ahead: Banner has not answered, the section is unchanged.
        assert queued == [crn]
        before = (await stored(campus, crn)).banner_synced_at
        assert before is not None and before < NOW - timedelta(hours=36)
        banner_answers.set()
        await refresher.drain()
    after = (await stored(campus, crn)).banner_synced_at
    assert after is not None and after > NOW - timedelta(minutes=5)


async def test_a_refresh_writes_what_banner_says_now(campus_factory: CampusFactory) -> None:
    campus = await current_campus(campus_factory)
    sections = copy.deepcopy(fixture_sections())
    moved = sections[0]
    moved["meetingsFaculty"][0]["meetingTime"]["room"] = "999"  # the lab moved rooms since the last sync
    fake = FakeBanner(sections=sections)
    async with serve_fake_banner(fake) as url:
        refresher = SectionRefresher(campus.sessions, catalog_for(url))
        await queue_refreshes(campus.sessions, refresher, refs([moved["courseReferenceNumber"]]), timezone=ZONE)
        await refresher.drain()
    rooms = {m.room for m in (await stored(campus, moved["courseReferenceNumber"])).meeting_times}
    assert "999" in rooms and "582" not in rooms
    [run] = await runs(campus)
    assert (run.outcome, run.items) == ("ok", 1)


async def test_a_failed_refresh_is_recorded_by_kind(campus_factory: CampusFactory) -> None:
    campus = await current_campus(campus_factory)
    crn = all_crns()[0]
    fake = FakeBanner(sections=fixture_sections(), fail={"searchResults/getFacultyMeetingTimes": 503})
    async with serve_fake_banner(fake) as url:
        refresher = SectionRefresher(campus.sessions, catalog_for(url))
        assert await queue_refreshes(campus.sessions, refresher, refs([crn]), timezone=ZONE) == [crn]
        await refresher.drain()
    [run] = await runs(campus)
    assert run.outcome == "partial"
    assert run.lost == {
        f"CRN {crn}": "server: searchResults/getFacultyMeetingTimes answered HTTP 503 (retried on the next run)"
    }


async def test_two_workers_at_once_queue_each_section_once(campus_factory: CampusFactory) -> None:
    """The keys are rows, not process memory: two web workers (two refreshers, two sessions)
    asked about the same sections at the same moment queue each section once between them."""
    campus = await current_campus(campus_factory)
    crns = all_crns()[:10]
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url:
        first = SectionRefresher(campus.sessions, catalog_for(url))
        second = SectionRefresher(campus.sessions, catalog_for(url))
        one, two = await asyncio.gather(
            queue_refreshes(campus.sessions, first, refs(crns), timezone=ZONE, now=NOW),
            queue_refreshes(campus.sessions, second, refs(list(reversed(crns))), timezone=ZONE, now=NOW),
        )
        await first.drain()
        await second.drain()
    assert sorted(one + two) == sorted(crns)
    assert len(fake.seen) == 10
