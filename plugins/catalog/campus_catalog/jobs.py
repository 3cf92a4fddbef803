"""The catalog's scheduled jobs (seed 000, the data-source table), in the campus time zone.

A source that is not configured contributes no job: with no Banner there is no sync, with no
calendar feed no calendar import. The triggers are constants here because the advisory's refresh
text (:mod:`campus_catalog.freshness`) says the same thing in words, and
``tests/test_freshness.py`` fails when the two disagree.

Failures by kind (seed 001): a job that could not reach its upstream at all raises, and the run
is recorded as failed with the reason (a timeout or 5xx is simply tried again by the next run);
a run that stored some items but lost others returns them in ``JobOutcome.lost``, and the host
records it as partial, which ``campus-mcp jobs list`` shows.
"""

from __future__ import annotations

import asyncio
import re
from datetime import date, timedelta
from pathlib import Path

from campus_mcp import Cron, Interval, Job, JobContext, JobOutcome, Settings, utcnow
from sqlalchemy import select

from campus_catalog.catalog_settings import CatalogSettings, feed_limit
from campus_catalog.models import Term
from campus_catalog.queries.clock import campus_today

SECTIONS_SYNC = Cron(hour="4", minute="0")
SEAT_REFRESH = Interval(minutes=30)
COURSE_DETAILS_SYNC = Cron(hour="4", minute="30")  # after the sections of the daily run
CALENDAR_IMPORT = Cron(day_of_week="sat", hour="2", minute="0")
ENSURE_FUTURE_TERMS = Cron(hour="1", minute="0")
DEGREE_REQUIREMENTS_IMPORT = Cron(day="2", hour="3", minute="0")
TERM_ELECTIVES_IMPORT = Cron(hour="3", minute="30")

# How far ahead terms are made before Banner lists them (seed 000: two years).
FUTURE_TERMS_AHEAD = timedelta(days=2 * 366)
# Seats are refreshed until this long after classes start.
SEATS_UNTIL_AFTER_START = timedelta(days=7)


async def run_sections_sync(context: JobContext) -> JobOutcome:
    from campus_catalog.semantic import fill_vectors_after_import
    from campus_catalog.sources.banner_sync import import_banner_file, sync_sections

    catalog: CatalogSettings = context.plugin_settings
    if catalog.banner_live:
        report, lost = await sync_sections(context.sessions, catalog, campus_today(context.settings.timezone))
        lost = {**report.lost(), **lost}
    else:
        assert catalog.banner_file is not None
        report = await import_banner_file(context.sessions, catalog.banner_file)
        lost = report.lost()
    vectors = await fill_vectors_after_import(context.sessions, "sections")
    await publish_section_changes(context, report.changed_sections)
    return JobOutcome(items=report.stored, lost=lost, summary=f"{report.summary()}; {vectors}")


async def run_seat_refresh(context: JobContext) -> JobOutcome:
    from campus_catalog.sources.banner_sync import refresh_seats

    changed: list[tuple[str, str]] = []
    updated, lost = await refresh_seats(
        context.sessions,
        context.plugin_settings,
        campus_today(context.settings.timezone),
        until_after_start=SEATS_UNTIL_AFTER_START,
        changed=changed,
    )
    await publish_section_changes(context, changed)
    return JobOutcome(items=updated, lost=lost, summary=f"seats of {updated} sections, {len(changed)} changed")


async def publish_section_changes(context: JobContext, sections: list[tuple[str, str]]) -> None:
    """Tell the students listening to these sections (or to a schedule holding one) that they
    changed: after the commit, so a client that reads again sees the new seats."""
    from campus_mcp import publish_changes

    from campus_catalog.resources import section_uri

    await publish_changes(context.settings, [section_uri(term, crn) for term, crn in sections])


async def run_course_details_sync(context: JobContext) -> JobOutcome:
    from campus_catalog.semantic import fill_vectors_after_import
    from campus_catalog.sources.course_details import sync_course_details

    done, lost = await sync_course_details(
        context.sessions, context.plugin_settings, campus_today(context.settings.timezone)
    )
    # A changed description cleared its course's vector (sync_course_details): embed it again.
    vectors = await fill_vectors_after_import(context.sessions, "course details")
    return JobOutcome(items=done, lost=lost, summary=f"details of {done} courses; {vectors}")


async def run_calendar_import(context: JobContext) -> JobOutcome:
    from campus_catalog.sources.calendar_ics import CALENDAR_FEED, import_calendar

    catalog: CatalogSettings = context.plugin_settings
    report = await import_calendar(
        context.sessions,
        context.settings.timezone,
        url=catalog.calendar_url,
        path=None if catalog.calendar_url else catalog.calendar_file,
        timeout_seconds=catalog.calendar_timeout_seconds,
        limit=feed_limit(CALENDAR_FEED, catalog.feed_max_bytes),
    )
    return JobOutcome(items=report.stored, lost=report.lost(), summary=report.summary())


async def _feed(url: str, path: Path | None, catalog: CatalogSettings, what: str) -> bytes:
    from campus_catalog.sources.feed_fetch import fetch_feed

    if url:
        limit = feed_limit(what, catalog.feed_max_bytes)
        return await fetch_feed(url, catalog.feed_timeout_seconds, limit=limit, accept="application/json")
    assert path is not None
    return await asyncio.to_thread(path.read_bytes)


async def run_degree_requirements_import(context: JobContext) -> JobOutcome:
    """The programs of the current catalog year and the one before (a URL feed), or the saved file."""
    from campus_catalog.sources.catalog_feeds import FeedReport, catalog_years_to_read, import_programs
    from campus_catalog.sources.errors import SourceError

    catalog: CatalogSettings = context.plugin_settings
    report = FeedReport()
    lost: dict[str, str] = {}
    if catalog.programs_url:
        documents = [
            (year, catalog.programs_url.replace("{catalog_year}", year))
            for year in catalog_years_to_read(campus_today(context.settings.timezone))
        ]
    else:
        documents = [("file", "")]
    read = 0
    for year, url in documents:
        try:
            data = await _feed(url, catalog.programs_file, catalog, f"programs feed {year}")
            async with context.session() as session:
                await import_programs(session, data, now=utcnow(), report=report)
                await session.commit()
            read += 1
        except SourceError as exc:
            lost[f"catalog year {year}"] = exc.record()
    if read == 0:
        raise RuntimeError("no programs feed could be read: " + "; ".join(f"{k}: {v}" for k, v in lost.items()))
    return JobOutcome(items=report.stored, lost={**report.lost(), **lost}, summary=report.summary("programs"))


async def run_term_electives_import(context: JobContext) -> JobOutcome:
    from campus_catalog.sources.catalog_feeds import FeedReport, import_elective_lists

    catalog: CatalogSettings = context.plugin_settings
    data = await _feed(catalog.electives_url, catalog.electives_file, catalog, "elective lists")
    report = FeedReport()
    async with context.session() as session:
        await import_elective_lists(session, data, now=utcnow(), report=report)
        await session.commit()
    return JobOutcome(items=report.stored, lost=report.lost(), summary=report.summary("elective lists"))


_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")


def _shift_years(text: str, years: int) -> str:
    return _YEAR.sub(lambda m: str(int(m.group(1)) + years), text)


def _shift_date(day: date, years: int) -> date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28)


async def run_ensure_future_terms(context: JobContext) -> JobOutcome:
    """Make the terms of the next two years before Banner lists them, so a student can plan ahead.

    Each term repeats yearly with the year in its code (``202710`` -> ``202810``) and its name;
    the newest term of each kind (the code without its year) is copied a year later, with its
    dates moved a year, until two years from today. Banner's own data replaces the guessed dates
    when the term's sections are first listed. These terms have no sections, so the freshness
    list leaves them out.
    """
    today = campus_today(context.settings.timezone)
    made: list[str] = []
    async with context.session() as session:
        terms = list(await session.scalars(select(Term)))
        codes = {t.uid for t in terms}
        newest: dict[str, Term] = {}
        for term in terms:
            if len(term.uid) < 6 or not term.uid[:4].isdigit():
                continue  # not a year-first code: nothing to repeat safely
            kind = term.uid[4:]
            if kind not in newest or term.uid > newest[kind].uid:
                newest[kind] = term
        for kind, term in newest.items():
            years = 1
            while _shift_date(term.start_date, years) <= today + FUTURE_TERMS_AHEAD:
                code = f"{int(term.uid[:4]) + years}{kind}"
                if code not in codes:
                    session.add(
                        Term(
                            uid=code,
                            name=_shift_years(term.name, years),
                            start_date=_shift_date(term.start_date, years),
                            end_date=_shift_date(term.end_date, years),
                        )
                    )
                    codes.add(code)
                    made.append(code)
                years += 1
        await session.commit()
    return JobOutcome(items=len(made), summary=f"made terms {', '.join(sorted(made)) or 'none'}")


def catalog_jobs(settings: Settings, catalog: CatalogSettings) -> list[Job]:
    """The jobs of the configured sources only."""
    jobs: list[Job] = []
    if catalog.banner_configured:
        jobs.append(
            Job(
                id="catalog.sections_sync",
                description="Sections of the current and future terms from Banner (daily run)",
                trigger=SECTIONS_SYNC,
                run=run_sections_sync,
                refreshes=("sections",),
            )
        )
        jobs.append(
            Job(
                id="catalog.ensure_future_terms",
                description="Terms up to two years ahead, before Banner lists them",
                trigger=ENSURE_FUTURE_TERMS,
                run=run_ensure_future_terms,
            )
        )
    if catalog.banner_live:
        jobs.append(
            Job(
                id="catalog.seat_refresh",
                description="Seats and waitlists of the terms in registration",
                trigger=SEAT_REFRESH,
                run=run_seat_refresh,
                refreshes=("sections",),
            )
        )
        jobs.append(
            Job(
                id="catalog.course_details_sync",
                description="Course descriptions from Banner, each course at most once every 7 days",
                trigger=COURSE_DETAILS_SYNC,
                run=run_course_details_sync,
                refreshes=("course_details",),
            )
        )
    if catalog.calendar_configured:
        jobs.append(
            Job(
                id="catalog.calendar_import",
                description="The academic calendar from its iCalendar feed",
                trigger=CALENDAR_IMPORT,
                run=run_calendar_import,
                refreshes=("university_calendar",),
            )
        )
    if catalog.programs_configured:
        jobs.append(
            Job(
                id="catalog.degree_requirements_import",
                description="Degree programs of the current catalog year and the one before",
                trigger=DEGREE_REQUIREMENTS_IMPORT,
                run=run_degree_requirements_import,
                refreshes=("degree_requirements",),
            )
        )
    if catalog.electives_configured:
        jobs.append(
            Job(
                id="catalog.term_electives_import",
                description="The schools' elective lists of each term",
                trigger=TERM_ELECTIVES_IMPORT,
                run=run_term_electives_import,
                refreshes=("term_electives",),
            )
        )
    return jobs
