"""The scheduled jobs run against a fake Banner: what they store, what they skip, how they fail."""

from __future__ import annotations

import copy
import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import Course, Section, Term
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_mcp import Job
from campus_mcp.testing import CampusFactory, CampusHarness, campus_today
from sqlalchemy import func, select, update

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
CALENDAR_FIXTURE = FIXTURES / "academic-calendar-princeton-2022-2023.ics"


def fixture_sections() -> list[dict[str, Any]]:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    return sections


@pytest.fixture
def banner_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("BANNER_URL", "BANNER_FILE", "CALENDAR_URL", "CALENDAR_FILE"):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE", "6000")
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_PAGE_SIZE", "50")
    return monkeypatch


def job(campus: CampusHarness, job_id: str) -> Job:
    found = campus.registry.jobs
    return found[job_id]


async def term(campus: CampusHarness, uid: str = "202131") -> Term:
    async with campus.sessions() as session:
        found = await session.scalar(select(Term).where(Term.uid == uid))
        assert found is not None
        return found


async def make_current(campus: CampusHarness, *, started_days_ago: int = 3) -> None:
    today = campus_today()
    async with campus.sessions() as session:
        await session.execute(
            update(Term).values(
                start_date=today - timedelta(days=started_days_ago), end_date=today + timedelta(days=100)
            )
        )
        await session.commit()


async def test_the_daily_sync_stores_every_term_banner_lists_and_never_a_past_one(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        run = await campus.run_job(job(campus, "catalog.sections_sync"))
        assert (run.outcome, run.items, run.error) == ("ok", 157, None)
        synced = await term(campus)
        assert synced.sections_synced_at is not None and synced.catalog_imported_at is None
        searches = [r for r in fake.seen if r.endpoint == "searchResults/searchResults"]
        assert [r.query["pageOffset"] for r in searches] == ["0", "50", "100", "150"]

        # Fall 2021 has ended (its meetings ran to 15 December 2021): the next run leaves it alone.
        fake.seen.clear()
        again = await campus.run_job(job(campus, "catalog.sections_sync"))
        assert (again.outcome, again.items) == ("ok", 0)
        assert fake.endpoints_seen() == ["GET classSearch/getTerms"]


async def test_a_500_mid_run_is_partial_keeps_the_pages_and_does_not_claim_a_full_sync(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    fake = FakeBanner(sections=fixture_sections(), fail_from_offset=100)
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        run = await campus.run_job(job(campus, "catalog.sections_sync"))
    assert run.outcome == "partial" and run.items == 100
    assert run.lost == {
        "term 202131": "server: searchResults/searchResults answered HTTP 500 (retried on the next run) after 100 section(s)"
    }
    assert (await term(campus)).sections_synced_at is None  # freshness is a full run's time
    async with campus.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Section)) == 100


async def test_banner_down_fails_the_run_with_the_reason(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    fake = FakeBanner(sections=fixture_sections(), fail={"classSearch/getTerms": 502})
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        run = await campus.run_job(job(campus, "catalog.sections_sync"))
    assert run.outcome == "failed"
    assert run.error == "UpstreamUnavailable: classSearch/getTerms answered HTTP 502"


async def test_a_section_banner_stopped_listing_is_cancelled_not_deleted(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    sections = fixture_sections()
    fake = FakeBanner(sections=sections)
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        await campus.run_job(job(campus, "catalog.sections_sync"))
        await make_current(campus)
        fake.sections = sections[1:]
        run = await campus.run_job(job(campus, "catalog.sections_sync"))
    assert (run.outcome, run.items) == ("ok", 156)
    async with campus.sessions() as session:
        gone = await session.scalar(select(Section).where(Section.crn == sections[0]["courseReferenceNumber"]))
        assert gone is not None and gone.cancelled


async def test_seats_refresh_every_30_minutes_only_until_7_days_after_classes_start(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    sections = copy.deepcopy(fixture_sections())
    fake = FakeBanner(sections=sections)
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        await campus.run_job(job(campus, "catalog.sections_sync"))
        crn = sections[0]["courseReferenceNumber"]
        async with campus.sessions() as session:
            before = await session.scalar(select(Section.banner_synced_at).where(Section.crn == crn))
        sections[0]["seatsAvailable"] = -2  # two students over capacity now
        sections[0]["enrollment"] = 23

        await make_current(campus, started_days_ago=6)
        run = await campus.run_job(job(campus, "catalog.seat_refresh"))
        assert (run.outcome, run.items) == ("ok", 157)
        async with campus.sessions() as session:
            row = (
                await session.execute(
                    select(Section.seats_available, Section.enrolled, Section.banner_synced_at).where(
                        Section.crn == crn
                    )
                )
            ).one()
        assert (row.seats_available, row.enrolled) == (-2, 23)
        assert row.banner_synced_at == before  # the seat refresh never moves banner_synced_at

        await make_current(campus, started_days_ago=8)  # a week after classes started: no more seats
        fake.seen.clear()
        late = await campus.run_job(job(campus, "catalog.seat_refresh"))
        assert (late.outcome, late.items) == ("ok", 0)
        assert fake.seen == []


async def test_course_details_each_course_at_most_once_every_7_days(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        await campus.run_job(job(campus, "catalog.sections_sync"))
        await make_current(campus)
        async with campus.sessions() as session:
            courses = await session.scalar(select(func.count()).select_from(Course))
        fake.seen.clear()
        first = await campus.run_job(job(campus, "catalog.course_details_sync"))
        assert (first.outcome, first.items) == ("ok", courses)
        assert len(fake.seen) == 2 * courses  # a description and a prerequisite page per course, not per section
        assert (await term(campus)).details_synced_at is not None
        fake.seen.clear()
        second = await campus.run_job(job(campus, "catalog.course_details_sync"))
        assert (second.outcome, second.items) == ("ok", 0)
        assert fake.seen == []


async def test_future_terms_are_made_two_years_ahead(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", "https://banner.example.edu/StudentRegistrationSsb/ssb")
    campus = await campus_factory(plugins=["catalog"])
    today = campus_today()
    async with campus.sessions() as session:
        session.add(
            Term(
                uid=f"{today.year}10",
                name=f"Fall {today.year}",
                start_date=date(today.year, 9, 1),
                end_date=date(today.year, 12, 20),
            )
        )
        await session.commit()
    run = await campus.run_job(job(campus, "catalog.ensure_future_terms"))
    assert run.outcome == "ok"
    async with campus.sessions() as session:
        made = {t.uid: t.name for t in await session.scalars(select(Term))}
    assert made[f"{today.year + 1}10"] == f"Fall {today.year + 1}"
    assert made[f"{today.year + 2}10"] == f"Fall {today.year + 2}"
    assert f"{today.year + 3}10" not in made
    again = await campus.run_job(job(campus, "catalog.ensure_future_terms"))
    assert again.items == 0


async def test_the_calendar_job_reads_the_configured_file(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    if not CALENDAR_FIXTURE.is_file():
        pytest.skip(f"the calendar fixture is not at {CALENDAR_FIXTURE}")
    banner_env.setenv("CAMPUS_MCP_CATALOG_CALENDAR_FILE", str(CALENDAR_FIXTURE))
    campus = await campus_factory(plugins=["catalog"])
    assert campus.registry.contributions_of("catalog")["jobs"] == ["catalog.calendar_import"]
    run = await campus.run_job(job(campus, "catalog.calendar_import"))
    assert (run.outcome, run.items) == ("ok", 150)
    assert len(await campus.job_runs()) == 1


async def test_an_item_without_a_crn_is_reported_and_the_term_still_counts_as_read(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    sections = copy.deepcopy(fixture_sections())
    broken_id = sections[3]["id"]
    sections[3]["courseReferenceNumber"] = None
    fake = FakeBanner(sections=sections)
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        run = await campus.run_job(job(campus, "catalog.sections_sync"))
    assert (run.outcome, run.items) == ("partial", 156)
    assert run.lost == {f"id {broken_id}": "no courseReferenceNumber; cannot be stored"}
    assert (await term(campus)).sections_synced_at is not None


async def test_a_list_that_moves_while_it_is_paged_is_read_again_and_cancels_nothing(
    campus_factory: CampusFactory, banner_env: pytest.MonkeyPatch
) -> None:
    sections = copy.deepcopy(fixture_sections())
    fake = FakeBanner(sections=sections)
    async with serve_fake_banner(fake) as url:
        banner_env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", url)
        campus = await campus_factory(plugins=["catalog"])
        await campus.run_job(job(campus, "catalog.sections_sync"))
        await make_current(campus)

        def drop_one_after_the_first_page(banner: FakeBanner, offset: int) -> None:
            if offset == 0:
                banner.sections = list(banner.sections)[1:]  # the registrar deletes a section now

        fake.after_page = drop_one_after_the_first_page
        run = await campus.run_job(job(campus, "catalog.sections_sync"))
    assert run.outcome == "partial"
    assert run.lost == {
        "term 202131": "Banner listed 157 sections but the pages held 156 different ones "
        "(the list changed while it was read); retried on the next run"
    }
    async with campus.sessions() as session:
        # The section skipped by the shifted pages is not taken for cancelled.
        assert await session.scalar(select(func.count()).select_from(Section).where(Section.cancelled)) == 0
