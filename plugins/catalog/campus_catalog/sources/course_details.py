"""Course details from Banner: each course at most once every 7 days, in the daily run.

Banner's class search has a description page and a prerequisite page per section
(``getCourseDescription``, ``getSectionPrerequisites``), so one section of each course is read:
two requests a course. A course read in the last 7 days is skipped, which spreads the
catalog over a week of nightly runs at Banner's pace instead of one long burst. A term's
``details_synced_at`` is set only when every course of it is fresh: the time of a full run.

A timeout or 5xx ends the run (Banner is struggling; the rest waits for the next night); an
answer that cannot be read is recorded for that course and the run goes on. The pages are read as
``banner_details`` reads saved ones (``apply_details``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta

from campus_mcp import utcnow
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section, Term
from campus_catalog.sources.banner_details import apply_details, subject_codes
from campus_catalog.sources.banner_sync import open_banner
from campus_catalog.sources.errors import SourceError

DETAILS_FRESH_FOR = timedelta(days=7)


async def sync_course_details(
    sessions: async_sessionmaker[AsyncSession],
    settings: CatalogSettings,
    today: date,
    *,
    now: datetime | None = None,
    only_terms: Sequence[str] | None = None,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> tuple[int, dict[str, str]]:
    """Read the details of each stale course of the current and future terms (``only_terms``:
    of these terms instead, past ones too: ``campus-mcp import banner --details --term``), and
    how many courses were read; what was lost, by CRN."""
    now = now or utcnow()
    stale_before = now - DETAILS_FRESH_FOR
    lost: dict[str, str] = {}
    done = 0
    async with sessions() as session:
        which = Term.end_date >= today if only_terms is None else Term.uid.in_(list(only_terms))
        held = select(Term).where(Term.id.in_(select(Section.term_id).distinct()), which)
        terms = list(await session.scalars(held))
        subjects = await subject_codes(session)
    async with open_banner(settings) as banner:
        for term in terms:
            async with sessions() as session:
                # One CRN per stale course of the term.
                rows = (
                    await session.execute(
                        select(Course.id, func.min(Section.crn))
                        .join(Section, Section.course_id == Course.id)
                        .where(
                            Section.term_id == term.id,
                            or_(Course.details_synced_at.is_(None), Course.details_synced_at < stale_before),
                        )
                        .group_by(Course.id)
                    )
                ).all()
            finished = True
            for number, (course_id, crn) in enumerate(rows):
                if progress is not None:
                    progress(f"course details of {term.uid}", number, len(rows))
                try:
                    description_page = await banner.course_description(term.uid, crn)
                    prerequisites_page = await banner.section_prerequisites(term.uid, crn)
                except SourceError as exc:
                    lost[f"CRN {crn}"] = exc.record()
                    finished = False
                    if exc.retry:
                        return done, lost
                    continue
                async with sessions() as session:
                    course = await session.get(Course, course_id)
                    if course is None:
                        continue
                    _changed, problem = await apply_details(
                        session,
                        course,
                        description_page=description_page,
                        prerequisites_page=prerequisites_page,
                        subjects=subjects,
                    )
                    if problem is not None:
                        # Final for this week: the page is kept as it was, the course says why.
                        lost[f"CRN {crn}"] = f"parse: {problem} (final)"
                    course.details_synced_at = now
                    await session.commit()
                    done += 1
            if finished:
                async with sessions() as session:
                    stored = await session.get(Term, term.id)
                    if stored is not None:
                        stored.details_synced_at = now
                        await session.commit()
    return done, lost
