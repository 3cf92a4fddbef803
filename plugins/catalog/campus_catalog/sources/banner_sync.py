"""Banner runs: a file import, the daily section sync and the seat refresh, over the importer.

Failures are kept apart by kind (seed 001). A term whose pages could not all be read is named in
the run's ``lost`` with the reason and whether the next run retries it; the pages that did come
are stored, but the term's sync time is not set, because freshness is the time of a full run.
A section that could not be fully mapped is reported by CRN. Nothing is swallowed.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from campus_mcp import count_import_failures, utcnow
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_catalog.catalog_settings import CatalogSettings, banner_limit
from campus_catalog.models import Section, Term
from campus_catalog.sources.banner_client import BannerClient
from campus_catalog.sources.banner_details import has_detail_pages, import_detail_pages
from campus_catalog.sources.banner_import import ImportReport, cancel_missing_sections, import_term_sections
from campus_catalog.sources.banner_parse import BannerSection, MappingProblem, parse_search_results
from campus_catalog.sources.errors import SourceError

# Called with (what is being done, items done so far, items in all or None): the CLI's progress bar.
Progress = Callable[[str, int, int | None], None]


def _no_progress(_what: str, _done: int, _total: int | None) -> None:
    return None


def open_banner(settings: CatalogSettings) -> BannerClient:
    """A new Banner session with the campus's pace, timeout and page size."""
    return BannerClient(
        settings.banner_url,
        requests_per_minute=settings.banner_requests_per_minute,
        timeout_seconds=settings.banner_timeout_seconds,
        page_size=settings.banner_page_size,
        limit=banner_limit(settings.banner_page_max_bytes),
    )


def saved_pages(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """File mode: one saved ``searchResults`` response, or a JSON list of them (a harvest of
    every page of a term, saved as one file), or every ``*.json`` in a folder."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no .json files in {path}")
    pages: list[tuple[str, dict[str, Any]]] = []
    for file in files:
        try:
            page = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{file.name} is not a saved Banner searchResults JSON file: {exc}") from exc
        if isinstance(page, list) and page and all(isinstance(item, dict) for item in page):
            pages.extend((f"{file.name} page {number}", item) for number, item in enumerate(page, start=1))
            continue
        if not isinstance(page, dict):
            raise ValueError(
                f"{file.name} is not a Banner searchResults object, nor a JSON list of them: save the "
                "searchResults answers as they came (one a file, or a list of them)"
            )
        pages.append((file.name, page))
    return pages


def _by_term(sections: Iterable[BannerSection], report: ImportReport) -> dict[str, list[BannerSection]]:
    grouped: dict[str, list[BannerSection]] = defaultdict(list)
    for section in sections:
        if section.term:
            grouped[section.term].append(section)
        else:
            report.problems.append(MappingProblem(section.crn, "no term code; cannot be stored", kind="no term code"))
    return grouped


async def import_banner_file(
    sessions: async_sessionmaker[AsyncSession], path: Path, *, progress: Progress = _no_progress
) -> ImportReport:
    """Import saved responses. Each term in them counts as imported (``catalog_imported_at``).
    A folder's saved detail pages (``banner_details``) are imported after its sections."""
    report = ImportReport()
    sections: list[BannerSection] = []
    for name, page in await asyncio.to_thread(saved_pages, path):
        try:
            parsed = parse_search_results(page, source=name)
        except ValueError as exc:
            report.problems.append(MappingProblem(f"page {name}", str(exc), kind="unreadable page"))
            continue
        sections.extend(parsed.sections)
        report.problems.extend(parsed.problems)
    grouped = _by_term(sections, report)
    total = sum(len(v) for v in grouped.values())
    done = 0
    now = utcnow()
    async with sessions() as session:
        for code, members in grouped.items():
            progress(f"term {code}", done, total)
            await import_term_sections(session, code, members, now=now, report=report, complete=True, kind="import")
            done += len(members)
        await session.commit()
    if await asyncio.to_thread(has_detail_pages, path):
        report.details = await import_detail_pages(sessions, path, progress=progress)
    progress("done", total, total)
    return report


async def terms_to_sync(session: AsyncSession, banner_terms: Sequence[tuple[str, str]], today: date) -> list[str]:
    """The terms the daily sync reads: current and future only (seed 000: a past term is never
    refreshed). A term we hold is past when it ended before today; one we do not hold yet is
    read unless Banner itself marks it view-only (Banner's word for a past term)."""
    ended = set((await session.scalars(select(Term.uid).where(Term.end_date < today))).all())
    return [code for code, description in banner_terms if code not in ended and "view only" not in description.lower()]


async def sync_term(
    sessions: async_sessionmaker[AsyncSession],
    banner: BannerClient,
    term_code: str,
    report: ImportReport,
    lost: dict[str, str],
    *,
    progress: Progress = _no_progress,
) -> bool:
    """Read every page of one term and store it. True when the whole term was read."""
    sections: list[BannerSection] = []
    complete = True
    listed: int | None = None
    unstorable = 0
    try:
        async for page in banner.search_pages(term_code):
            parsed = parse_search_results(page, source=f"term {term_code} offset {len(sections)}")
            if parsed.total_count is not None:
                listed = max(listed or 0, parsed.total_count)
            unstorable += parsed.unstorable
            sections.extend(parsed.sections)
            # An item with no CRN is reported (the run is partial) but does not make the term
            # incomplete: every page was read, and one broken item must not stop the term's
            # freshness from ever moving again.
            report.problems.extend(parsed.problems)
            # On /metrics: an item stored with a gap, or not stored (no CRN), is a mapping failure.
            count_import_failures("banner", {"mapping": len(parsed.problems)})
            progress(f"term {term_code}", len(sections), parsed.total_count)
    except SourceError as exc:
        lost[f"term {term_code}"] = f"{exc.record()} after {len(sections)} section(s)"
        count_import_failures("banner", {exc.kind: 1})  # the rest of the term: timeout, server, parse ...
        complete = False
    except ValueError as exc:
        lost[f"term {term_code}"] = f"parse: {exc} (final)"
        count_import_failures("banner", {"parse": 1})
        complete = False
    if not sections:
        return False
    distinct = len({s.crn for s in sections}) + unstorable
    shifted = distinct < len(sections) + unstorable  # a CRN on two pages: the pages moved
    if complete and listed is not None and (distinct < listed or shifted):
        # Banner's list moved while it was paged (a section added or dropped shifts the pages), so
        # some sections were missed. Calling them cancelled would be wrong: the term is read again.
        lost[f"term {term_code}"] = (
            f"Banner listed {listed} sections but the pages held {distinct} different ones "
            "(the list changed while it was read); retried on the next run"
        )
        count_import_failures("banner", {"pages_shifted": 1})
        complete = False
    now = utcnow()
    async with sessions() as session:
        term = await import_term_sections(
            session, term_code, sections, now=now, report=report, complete=complete, kind="sync"
        )
        if complete:
            cancelled = await cancel_missing_sections(session, term, {s.crn for s in sections})
            report.changed_sections.extend((term_code, crn) for crn in cancelled)
        await session.commit()
    return complete


async def sync_sections(
    sessions: async_sessionmaker[AsyncSession],
    settings: CatalogSettings,
    today: date,
    *,
    only_terms: Sequence[str] | None = None,
    progress: Progress = _no_progress,
) -> tuple[ImportReport, dict[str, str]]:
    """The daily sync: every current and future term Banner lists, one Banner session each."""
    report = ImportReport()
    lost: dict[str, str] = {}
    async with open_banner(settings) as banner:
        listed = [(t.code, t.description) for t in await banner.terms()]
    if only_terms is not None:
        listed = [(code, desc) for code, desc in listed if code in only_terms]
    async with sessions() as session:
        codes = await terms_to_sync(session, listed, today)
    for code in codes:
        # A new session per term: Banner keeps the selected term in the session.
        async with open_banner(settings) as banner:
            await sync_term(sessions, banner, code, report, lost, progress=progress)
    return report, lost


async def refresh_seats(
    sessions: async_sessionmaker[AsyncSession],
    settings: CatalogSettings,
    today: date,
    *,
    until_after_start: timedelta = timedelta(days=7),
    now: datetime | None = None,
    changed: list[tuple[str, str]] | None = None,
) -> tuple[int, dict[str, str]]:
    """Seats of the terms in registration: from when a term's sections are listed until 7 days
    after its classes start. Reads the search pages (500 sections a request, so a whole term is a
    handful of requests) and writes only the seat counts and ``seats_synced_at``: never
    ``banner_synced_at``, which belongs to the full read (seed 000). ``changed`` gets the
    (term uid, CRN) of each section whose seats or waitlist moved, for its listeners."""
    now = now or utcnow()
    lost: dict[str, str] = {}
    updated = 0
    async with sessions() as session:
        terms = list(
            await session.scalars(
                select(Term).where(
                    Term.start_date >= today - until_after_start,
                    Term.id.in_(select(Section.term_id).distinct()),
                )
            )
        )
    for term in terms:
        seats: dict[str, BannerSection] = {}
        try:
            async with open_banner(settings) as banner:
                async for page in banner.search_pages(term.uid):
                    for listed in parse_search_results(page).sections:
                        seats[listed.crn] = listed
        except SourceError as exc:
            lost[f"term {term.uid}"] = exc.record()
            # The pages read so far are still current seat counts: store them.
        except ValueError as exc:
            lost[f"term {term.uid}"] = f"parse: {exc} (final)"
        async with sessions() as session:
            for stored in await session.scalars(
                select(Section).where(Section.term_id == term.id, Section.crn.in_(list(seats)))
            ):
                fresh = seats[stored.crn]
                counts = (fresh.max_enrollment, fresh.enrollment, fresh.seats_available)
                waitlist = (fresh.wait_capacity, fresh.wait_available)
                if changed is not None and (
                    (stored.capacity, stored.enrolled, stored.seats_available) != counts
                    or (stored.waitlist_capacity, stored.waitlist_available) != waitlist
                ):
                    changed.append((term.uid, stored.crn))
                stored.capacity = fresh.max_enrollment
                stored.enrolled = fresh.enrollment
                stored.seats_available = fresh.seats_available
                stored.waitlist_capacity = fresh.wait_capacity
                stored.waitlist_available = fresh.wait_available
                stored.seats_synced_at = now
                updated += 1
            await session.commit()
    return updated, lost
