"""The stale-section refresh queue (seed 000, "Old section data").

The nightly sync can be a day old. So ``get_section``, ``check_schedule`` (and later
``my_courses``) queue a refresh of each section in their result that

- is not cancelled,
- is in a term the daily sync reads (current and future terms: a past term is never refreshed),
- was last read from Banner more than 36 hours ago (``CATALOG_FRESH_FOR``), so the nightly
  sync missed it.

Rules, each held by a test in ``tests/test_refresh_queue.py``:

- at most 30 sections per call (``REFRESH_LIMIT``);
- a key stops a section from being queued again for 6 hours (``REFRESH_QUEUED_FOR``), also when
  Banner gives nothing and ``banner_synced_at`` does not change. The keys are rows of a table
  with an expiry, not process memory, so several web workers share them;
- if the refresh cannot be queued, the keys just written are removed, so the next call tries again;
- the answer never waits: the refresh runs in a background worker, paced with everything else
  that reads Banner;
- a failure (to queue, or of the refresh itself) is recorded as a run of
  ``catalog.section_refresh`` in the job records, and the tool still answers.

Seats need no refresh here: the seat refresh job writes them every 30 minutes during
registration, and it does not touch ``banner_synced_at``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from campus_mcp import Base, JobOutcome, UTCDateTime, publish_changes, record_run, utcnow
from sqlalchemy import Index, String, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column, selectinload

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Section, Term
from campus_catalog.resources import section_uri

if TYPE_CHECKING:
    from campus_mcp import Settings, ToolContext

log = logging.getLogger(__name__)

REFRESH_LIMIT = 30
REFRESH_QUEUED_FOR = timedelta(hours=6)
CATALOG_FRESH_FOR = timedelta(hours=36)
JOB_ID = "catalog.section_refresh"
# Work waiting in one process; beyond this, queueing fails (and the keys are removed).
QUEUE_CAPACITY = 300

SectionRef = tuple[str, str]  # (term uid, CRN)


class SectionRefreshKey(Base):
    """A section queued for a refresh; the row blocks re-queueing until ``expires_at``."""

    __tablename__ = "catalog_section_refresh_keys"
    __table_args__ = (Index("ix_catalog_section_refresh_keys_expires_at", "expires_at"),)

    term_uid: Mapped[str] = mapped_column(String(20), primary_key=True)
    crn: Mapped[str] = mapped_column(String(20), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class SectionRefresher:
    """The background worker of one process and one database: reads Banner, writes sections."""

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], catalog: CatalogSettings, settings: Settings | None = None
    ) -> None:
        self.sessions = sessions
        self.catalog = catalog
        # The host's settings: where a section whose times changed is published (campus_mcp.assembly.change_bus).
        self.settings = settings
        self.queue: asyncio.Queue[list[SectionRef]] = asyncio.Queue(maxsize=QUEUE_CAPACITY)
        self._worker: asyncio.Task[None] | None = None

    def submit(self, sections: list[SectionRef]) -> None:
        """Queue one call's sections; raises (``asyncio.QueueFull``) when the queue is full."""
        self.queue.put_nowait(sections)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work(), name="catalog-section-refresh")

    async def drain(self) -> None:
        """Wait until every queued refresh has run (tests, and a clean shutdown)."""
        await self.queue.join()

    async def _work(self) -> None:
        while True:
            batch = await self.queue.get()
            try:
                await self.refresh(batch)
            except Exception:  # never let one batch stop the worker
                log.exception("section refresh worker: a batch failed outside its own records")
            finally:
                self.queue.task_done()

    async def refresh(self, batch: Sequence[SectionRef]) -> None:
        """Read each section's meetings and instructors from Banner and record the run."""
        from campus_catalog.sources.banner_import import refresh_section_from_banner
        from campus_catalog.sources.banner_parse import MappingProblem, parse_instructors, parse_meeting
        from campus_catalog.sources.banner_sync import open_banner
        from campus_catalog.sources.errors import SourceError

        started = utcnow()
        lost: dict[str, str] = {}
        refreshed = 0
        empty = 0
        changed: list[str] = []
        async with open_banner(self.catalog) as banner:
            for term_uid, crn in batch:
                try:
                    answer = await banner.faculty_meeting_times(term_uid, crn)
                except SourceError as exc:
                    lost[f"CRN {crn}"] = exc.record()
                    continue
                entries = [e for e in answer.get("fmt") or [] if isinstance(e, dict)]
                if not entries:
                    empty += 1  # Banner gave nothing: banner_synced_at stays, the key still holds
                    continue
                problems: list[MappingProblem] = []
                meetings = [
                    parse_meeting(e["meetingTime"], crn, i, problems)
                    for i, e in enumerate(entries)
                    if isinstance(e.get("meetingTime"), dict)
                ]
                people = parse_instructors([p for e in entries for p in e.get("faculty") or []], crn, problems)
                unique_people = tuple({p.name: p for p in people}.values())
                for problem in problems:
                    lost[f"CRN {crn}"] = problem.reason
                async with self.sessions() as session:
                    section = await session.scalar(
                        select(Section)
                        .join(Term, Term.id == Section.term_id)
                        .where(Term.uid == term_uid, Section.crn == crn)
                        .options(selectinload(Section.meeting_times), selectinload(Section.instructor_links))
                    )
                    if section is None:
                        lost[f"CRN {crn}"] = "no longer in the catalog"
                        continue
                    if await refresh_section_from_banner(session, section, meetings, unique_people, now=utcnow()):
                        changed.append(section_uri(term_uid, crn))
                    await session.commit()
                    refreshed += 1
        summary = f"{refreshed} of {len(batch)} sections refreshed; Banner gave nothing for {empty}"
        await record_catalog_run(self.sessions, started, refreshed, lost, summary)
        if changed and self.settings is not None:
            await publish_changes(self.settings, changed)


async def record_catalog_run(
    sessions: async_sessionmaker[AsyncSession],
    started: datetime,
    items: int,
    lost: dict[str, str],
    summary: str,
    error: str | None = None,
    *,
    job_id: str = JOB_ID,
) -> None:
    """A run outside the scheduler (a refresh, a failure to queue one, an import from the command
    line) in the job records, where `campus-mcp jobs list` shows it with what it lost."""
    async with sessions() as session:
        outcome = JobOutcome(items=items, lost=lost, summary=summary)
        await record_run(session, job_id=job_id, plugin="catalog", started_at=started, outcome=outcome, error=error)
        await session.commit()


_refreshers: dict[tuple[int, int], SectionRefresher] = {}


def refresher_for(
    sessions: async_sessionmaker[AsyncSession], catalog: CatalogSettings, settings: Settings | None = None
) -> SectionRefresher:
    """The refresher of this database in this event loop."""
    key = (id(sessions), id(asyncio.get_running_loop()))
    refresher = _refreshers.get(key)
    if refresher is None:
        refresher = _refreshers[key] = SectionRefresher(sessions, catalog, settings)
    return refresher


async def stale_sections(
    session: AsyncSession, sections: Sequence[SectionRef], *, now: datetime, timezone: str
) -> list[SectionRef]:
    """Those of ``sections`` that need a refresh, in the order given."""
    today = now.astimezone(ZoneInfo(timezone)).date()
    rows = await session.execute(
        select(Term.uid, Section.crn)
        .join(Term, Term.id == Section.term_id)
        .where(
            Section.crn.in_({crn for _, crn in sections}),
            Section.cancelled.is_(False),
            Term.end_date >= today,
            (Section.banner_synced_at.is_(None)) | (Section.banner_synced_at < now - CATALOG_FRESH_FOR),
        )
    )
    found = {(uid, crn) for uid, crn in rows}
    return [ref for ref in sections if ref in found]


async def claim_keys(session: AsyncSession, candidates: Sequence[SectionRef], *, now: datetime) -> list[SectionRef]:
    """Write a key for each section that has no live one; returns the sections claimed (at most 30).

    Each insert is its own savepoint, so when another worker claims the same section at the same
    moment, the primary key refuses one of them and that one simply skips it.
    """
    await session.execute(delete(SectionRefreshKey).where(SectionRefreshKey.expires_at <= now))
    live = {
        (key.term_uid, key.crn)
        for key in await session.scalars(
            select(SectionRefreshKey).where(SectionRefreshKey.crn.in_({crn for _, crn in candidates}))
        )
    }
    claimed: list[SectionRef] = []
    for term_uid, crn in candidates:
        if len(claimed) >= REFRESH_LIMIT:
            break
        if (term_uid, crn) in live:
            continue
        try:
            async with session.begin_nested():
                session.add(SectionRefreshKey(term_uid=term_uid, crn=crn, expires_at=now + REFRESH_QUEUED_FOR))
        except IntegrityError:
            continue
        claimed.append((term_uid, crn))
    await session.commit()
    return claimed


async def release_keys(session: AsyncSession, sections: Sequence[SectionRef]) -> None:
    for term_uid, crn in sections:
        await session.execute(
            delete(SectionRefreshKey).where(SectionRefreshKey.term_uid == term_uid, SectionRefreshKey.crn == crn)
        )
    await session.commit()


async def queue_refreshes(
    sessions: async_sessionmaker[AsyncSession],
    refresher: SectionRefresher,
    sections: Iterable[SectionRef],
    *,
    timezone: str,
    now: datetime | None = None,
) -> list[str]:
    """Queue the stale ones of ``sections``; returns the CRNs queued. Never raises."""
    now = now or utcnow()
    wanted = list(dict.fromkeys(sections))
    if not wanted:
        return []
    claimed: list[SectionRef] = []
    try:
        async with sessions() as session:
            stale = await stale_sections(session, wanted, now=now, timezone=timezone)
            if not stale:
                return []
            claimed = await claim_keys(session, stale, now=now)
        if claimed:
            refresher.submit(claimed)
        return [crn for _, crn in claimed]
    except Exception as exc:
        log.warning("could not queue a refresh of %d section(s): %s", len(claimed), exc)
        with contextlib.suppress(Exception):
            if claimed:
                async with sessions() as session:
                    await release_keys(session, claimed)
        with contextlib.suppress(Exception):
            await record_catalog_run(
                sessions,
                now,
                0,
                {f"CRN {crn}": "not queued; the key was removed so the next call tries again" for _, crn in claimed},
                f"could not queue {len(claimed)} section(s)",
                error=f"{type(exc).__name__}: {exc}",
            )
        return []


async def queue_stale_sections(context: ToolContext, sections: Iterable[SectionRef]) -> list[str]:
    """The one call a tool makes with the (term uid, CRN) of each section in its result.

    Does nothing when Banner is not read live (file mode or no Banner): there is nothing to
    refresh from. Returns at once; the refresh runs in the background.
    """
    catalog: CatalogSettings = context.plugin_settings
    if not catalog.banner_live:
        return []
    refresher = refresher_for(context.sessions, catalog, context.settings)
    return await queue_refreshes(context.sessions, refresher, sections, timezone=context.settings.timezone)
