"""The data sources of the advisory: what each source is, how often it is refreshed, and when
it last was (seed 000, ``Catalog::Freshness``).

The refresh text says in words what the jobs' triggers do (:mod:`campus_catalog.jobs`).
``tests/test_freshness.py`` renders each job's trigger and checks the text says the same, so a
schedule changed in one place and not the other fails. A source that is not configured says
that it is loaded by hand rather than claiming a schedule nobody runs.

Last refresh, per seed 000: the term sources (``sections``, ``course_details``, ``finals``) give
one time per current and future term that has sections; the time is when a full run finished
the term, never when one course changed. Terms made ahead of Banner (no sections) are left out.
The host's advisory caches these times for 10 minutes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime

from campus_mcp import DataSource, Settings, campus_time_text
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from campus_catalog.campus_rules import campus_rules
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import CatalogYear, FinalsSchedule, Section, Term, TermElectiveList, UniversityEvent
from campus_catalog.queries.clock import campus_today

LastRefresh = Callable[[AsyncSession], Awaitable[datetime | Mapping[str, datetime] | None]]

# The words of the time zone in the refresh texts; other zones are named by their IANA name.
_ZONE_WORDS = {
    "America/New_York": "Eastern",
    "America/Chicago": "Central",
    "America/Denver": "Mountain",
    "America/Phoenix": "Arizona time",
    "America/Los_Angeles": "Pacific",
}


def zone_words(timezone: str) -> str:
    return _ZONE_WORDS.get(timezone, timezone)


async def _active_terms(session: AsyncSession, timezone: str) -> list[Term]:
    """Current and future terms that have sections: the terms the freshness list names. A campus
    whose sections are all of past terms (an import of an old term, as a campus trying the server
    does) names its newest such term instead: else its advisory said "no refresh time" of data it
    holds, and the model went to read the student system itself (issue 37, point 6)."""
    with_sections = Term.id.in_(select(Section.term_id).distinct())
    active = list(await session.scalars(select(Term).where(Term.end_date >= campus_today(timezone), with_sections)))
    if active:
        return active
    newest = await session.scalar(select(Term).where(with_sections).order_by(Term.end_date.desc()).limit(1))
    return [newest] if newest is not None else []


def seats_as_of(moment: datetime | None, timezone: str, refreshed: bool) -> str:
    """When the seats were read, in campus time, and whether anything reads them again: "seats as
    of Tuesday, December 7, 3:40 PM, not refreshed" on a campus with no live Banner, where seats
    are only what the last import held (issue 37, point 6)."""
    if moment is None:
        return "Seats not loaded here: ask the registrar or see the class search."
    when = campus_time_text(moment, timezone)
    if refreshed:
        return f"Seats as of {when}; refreshed every 30 minutes during registration."
    return f"Seats as of {when}, not refreshed: for seats now, see the campus's class search."


def sections_last_refresh(timezone: str) -> LastRefresh:
    async def last(session: AsyncSession) -> Mapping[str, datetime]:
        found: dict[str, datetime] = {}
        for term in await _active_terms(session, timezone):
            times = [t for t in (term.sections_synced_at, term.catalog_imported_at) if t is not None]
            if times:
                found[term.uid] = max(times)
        return found

    return last


def course_details_last_refresh(timezone: str) -> LastRefresh:
    async def last(session: AsyncSession) -> Mapping[str, datetime]:
        return {
            term.uid: term.details_synced_at
            for term in await _active_terms(session, timezone)
            if term.details_synced_at is not None
        }

    return last


def finals_last_refresh(timezone: str) -> LastRefresh:
    async def last(session: AsyncSession) -> Mapping[str, datetime]:
        terms = await _active_terms(session, timezone)
        # One grouped query for all the terms, not one query per term.
        rows = await session.execute(
            select(FinalsSchedule.term_id, func.max(FinalsSchedule.loaded_at))
            .where(FinalsSchedule.term_id.in_([t.id for t in terms]), FinalsSchedule.status == "completed")
            .group_by(FinalsSchedule.term_id)
        )
        loaded = {term_id: at for term_id, at in rows}
        return {term.uid: at for term in terms if (at := loaded.get(term.id)) is not None}

    return last


def _latest(column: InstrumentedAttribute[datetime | None]) -> LastRefresh:
    async def last(session: AsyncSession) -> datetime | None:
        return await session.scalar(select(func.max(column)))

    return last


def refresh_texts(settings: Settings, catalog: CatalogSettings) -> dict[str, str]:
    """The refresh schedule of each source in words. Keep in step with the triggers in jobs.py."""
    zone = zone_words(settings.timezone)
    by_hand = "Loaded by an administrator with `campus-mcp import {}`; not refreshed on a schedule."
    if catalog.banner_live:
        sections = (
            f"Every day at 4 AM {zone}, for the current and future terms. A past term is not refreshed after "
            "it ends. Seats also every 30 minutes, from the time a term's sections are listed until 7 days "
            "after its classes start."
        )
        details = f"Each course at most once every 7 days, in the daily run (every day at 4:30 AM {zone})."
    elif catalog.banner_configured:
        sections = (
            f"Every day at 4 AM {zone}, from the saved Banner file, for the terms in it. "
            "Seats are not refreshed between runs."
        )
        details = by_hand.format("banner")
    else:
        sections = by_hand.format("banner")
        details = by_hand.format("banner")
    calendar = f"Every Saturday at 2 AM {zone}." if catalog.calendar_configured else by_hand.format("calendar")
    return {
        "sections": sections,
        "course_details": details,
        "finals": "When an administrator uploads a new schedule (`campus-mcp import finals`).",
        "university_calendar": calendar,
        "degree_requirements": (
            f"On the 2nd of each month at 3 AM {zone}, for the current catalog year and the year before."
            if catalog.programs_configured
            else "When an administrator imports the academic catalog; not refreshed on a schedule."
        ),
        "term_electives": (
            f"Every day at 3:30 AM {zone}."
            if catalog.electives_configured
            else "When an administrator imports the schools' elective lists; not refreshed on a schedule."
        ),
    }


def _seats_not_refreshed(refresh: str, timezone: str) -> Callable[[datetime | None], str]:
    """The sections' refresh words on a campus with no live Banner: when its seats were read."""

    def words(latest: datetime | None) -> str:
        # Once loaded, the seats' words say all a model needs (when, and that nothing reads them
        # again); who loads them by hand is the administrator's business, not the student's.
        return refresh if latest is None else seats_as_of(latest, timezone, refreshed=False)

    return words


def catalog_data_sources(settings: Settings, catalog: CatalogSettings) -> list[DataSource]:
    refresh = refresh_texts(settings, catalog)
    system = campus_rules(settings, catalog).student_system_name
    zone = settings.timezone
    return [
        DataSource(
            key="sections",
            covers="Meeting times, rooms, instructors, seats",
            origin=f"Banner class schedule ({system})" if system else "Banner class schedule",
            refresh=refresh["sections"],
            last_refresh=sections_last_refresh(zone),
            refresh_words=None if catalog.banner_live else _seats_not_refreshed(refresh["sections"], zone),
        ),
        DataSource(
            key="course_details",
            covers="Descriptions, credits, prerequisites, restrictions, mutual exclusions, catalog entry, fees, learning objectives",
            origin="Banner course catalog",
            refresh=refresh["course_details"],
            last_refresh=course_details_last_refresh(zone),
        ),
        DataSource(
            key="finals",
            covers="Final exam dates, times, rooms",
            origin="Registrar finals schedule",
            refresh=refresh["finals"],
            last_refresh=finals_last_refresh(zone),
        ),
        DataSource(
            key="university_calendar",
            covers="Holidays, term dates, deadlines",
            origin="Academic calendar",
            refresh=refresh["university_calendar"],
            last_refresh=_latest(UniversityEvent.last_fetched_at),
        ),
        DataSource(
            key="degree_requirements",
            covers="Degree programs, plans of study, elective lists",
            origin="Academic catalog",
            refresh=refresh["degree_requirements"],
            last_refresh=_latest(CatalogYear.imported_at),
        ),
        DataSource(
            key="term_electives",
            covers="The elective lists of each school for a term",
            origin="Registrar elective lists",
            refresh=refresh["term_electives"],
            last_refresh=_latest(TermElectiveList.fetched_at),
        ),
    ]
