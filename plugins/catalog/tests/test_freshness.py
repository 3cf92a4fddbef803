"""The advisory's data sources: refresh texts that match the jobs' triggers, and last refresh times."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.freshness import catalog_data_sources, refresh_texts
from campus_catalog.jobs import catalog_jobs
from campus_catalog.models import FinalsSchedule, Term
from campus_catalog.sources.banner_sync import import_banner_file
from campus_mcp import Cron, Interval, Job, Settings
from campus_mcp.testing import CampusFactory, campus_today
from sqlalchemy import select, update

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"

LIVE = CatalogSettings(
    banner_url="https://banner.example.edu/StudentRegistrationSsb/ssb",
    calendar_url="https://calendar.example.edu/academic.ics",
    programs_url="https://catalog.example.edu/export/programs-{catalog_year}.json",
    electives_url="https://registrar.example.edu/electives.json",
)
FILE_ONLY = CatalogSettings(banner_file=Path("saved.json"))
NOTHING = CatalogSettings()
DAYS = {
    "mon": "Monday",
    "tue": "Tuesday",
    "wed": "Wednesday",
    "thu": "Thursday",
    "fri": "Friday",
    "sat": "Saturday",
    "sun": "Sunday",
}


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def clock(hour: str, minute: str) -> str:
    h, m = int(hour), int(minute)
    return f"{h % 12 or 12}{'' if m == 0 else f':{m:02d}'} {'AM' if h < 12 else 'PM'}"


def in_words(job: Job) -> str:
    """What a trigger does, in the words the refresh texts use (written here, independently)."""
    trigger = job.trigger
    if isinstance(trigger, Interval):
        return f"every {trigger.minutes} minutes"
    assert isinstance(trigger, Cron)
    at = clock(trigger.hour, trigger.minute)
    if trigger.day_of_week != "*":
        return f"every {DAYS[trigger.day_of_week]} at {at}"
    if trigger.day != "*":
        return f"on the {ordinal(int(trigger.day))} of each month at {at}"
    return f"every day at {at}"


@pytest.mark.parametrize("catalog", [LIVE, FILE_ONLY, NOTHING], ids=["live", "file", "nothing"])
def test_the_refresh_text_says_what_each_job_does(catalog: CatalogSettings) -> None:
    settings = Settings(timezone="America/New_York")
    texts = refresh_texts(settings, catalog)
    jobs = catalog_jobs(settings, catalog)
    for job in jobs:
        for key in job.refreshes:
            assert in_words(job).lower() in texts[key].lower(), (job.id, in_words(job), texts[key])
    # And no source claims a schedule that no job runs.
    scheduled = {key for job in jobs for key in job.refreshes}
    for key, text in texts.items():
        if key not in scheduled:
            assert "every" not in text.lower(), (key, text)
    if "sections" in scheduled:
        assert "4 AM Eastern" in texts["sections"]  # the campus time zone, in words


def test_an_unconfigured_source_contributes_no_job() -> None:
    settings = Settings()
    assert catalog_jobs(settings, NOTHING) == []
    assert [j.id for j in catalog_jobs(settings, FILE_ONLY)] == ["catalog.sections_sync", "catalog.ensure_future_terms"]
    assert sorted(j.id for j in catalog_jobs(settings, LIVE)) == [
        "catalog.calendar_import",
        "catalog.course_details_sync",
        "catalog.degree_requirements_import",
        "catalog.ensure_future_terms",
        "catalog.seat_refresh",
        "catalog.sections_sync",
        "catalog.term_electives_import",
    ]
    texts = refresh_texts(settings, NOTHING)
    assert texts["sections"].startswith("Loaded by an administrator with `campus-mcp import banner`")


def test_the_seed_schedules() -> None:
    """Seed 000's table, in the campus time zone: a change here is a change of the product."""
    by_id = {job.id: job for job in catalog_jobs(Settings(), LIVE)}
    assert in_words(by_id["catalog.sections_sync"]) == "every day at 4 AM"
    assert in_words(by_id["catalog.seat_refresh"]) == "every 30 minutes"
    assert in_words(by_id["catalog.calendar_import"]) == "every Saturday at 2 AM"
    assert in_words(by_id["catalog.degree_requirements_import"]) == "on the 2nd of each month at 3 AM"
    assert in_words(by_id["catalog.term_electives_import"]) == "every day at 3:30 AM"
    assert "ensure_future_terms" not in {k for job in by_id.values() for k in job.refreshes}


async def test_last_refresh_is_a_full_runs_time_per_current_and_future_term(campus_factory: CampusFactory) -> None:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE}")
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    sources = {s.key: s for s in catalog_data_sources(campus.settings, LIVE)}
    async with campus.sessions() as session:
        # The fixture's term ended in 2021: with no current or future term, the newest past term
        # with sections is named, by its import (issue 37, point 6: it was {}, "never refreshed").
        assert (await sources["sections"].last_refresh(session)).keys() == {"202131"}
        today = campus_today()
        synced = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
        imported = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
        await session.execute(
            update(Term).values(
                start_date=today - timedelta(days=10),
                end_date=today + timedelta(days=80),
                sections_synced_at=synced,
                catalog_imported_at=imported,
                details_synced_at=synced,
            )
        )
        # A term made ahead of Banner, with no sections: left out.
        session.add(Term(uid="209910", name="Fall 2099", start_date=date(2099, 9, 1), end_date=date(2099, 12, 20)))
        term = await session.scalar(select(Term).where(Term.uid == "202131"))
        assert term is not None
        session.add(FinalsSchedule(term_id=term.id, status="failed", loaded_at=imported + timedelta(days=1)))
        session.add(FinalsSchedule(term_id=term.id, status="completed", loaded_at=synced))
        await session.commit()
        # The newer of the sync and the import.
        assert await sources["sections"].last_refresh(session) == {"202131": imported}
        assert await sources["course_details"].last_refresh(session) == {"202131": synced}
        # The latest *completed* schedule.
        assert await sources["finals"].last_refresh(session) == {"202131": synced}
        assert await sources["university_calendar"].last_refresh(session) is None


async def test_a_change_committed_in_this_process_shows_in_the_next_advisory(campus_factory: CampusFactory) -> None:
    # The freshness times are cached ten minutes; a commit that bumps the catalog's data version
    # (campus_mcp.version_bump, by the catalog's commit listener) has the host forget them.
    campus = await campus_factory(demo=True)

    async def sections_refreshed() -> object:
        result = await campus.call("search_sections", {"limit": 1})
        assert not result.is_error, result.content
        sources = {s["key"]: s for s in (result.structured_content or {})["advisory"]["data_sources"]}
        return sources["sections"]["last_refresh_by_term"]

    before = await sections_refreshed()
    synced = datetime(2030, 1, 2, 3, 4, tzinfo=UTC)
    async with campus.sessions() as session:
        await session.execute(update(Term).values(sections_synced_at=synced, catalog_imported_at=None))
        await session.commit()
    after = await sections_refreshed()
    assert after != before and isinstance(after, dict) and after, (before, after)
    assert set(after.values()) == {"2030-01-01T22:04:00-05:00"}, after  # campus time (issue 37, point 8)
