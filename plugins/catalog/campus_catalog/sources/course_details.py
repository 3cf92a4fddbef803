"""Course details from Banner: each course at most once every 7 days, in the daily run.

Banner's class search has a description page and a prerequisite page per section
(``getCourseDescription``, ``getSectionPrerequisites``), so one section of each course is read:
two requests a course. A course read in the last 7 days is skipped, which spreads the
catalog over a week of nightly runs at Banner's pace instead of one long burst. A term's
``details_synced_at`` is set only when every course of it is fresh: the time of a full run.

A timeout or 5xx ends the run (Banner is struggling; the rest waits for the next night); an
answer that cannot be read is recorded for that course and the run goes on.
"""

from __future__ import annotations

import html
from datetime import date, datetime, timedelta
from html.parser import HTMLParser

from campus_mcp import utcnow
from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section, Subject, Term
from campus_catalog.sources.banner_sync import open_banner
from campus_catalog.sources.errors import SourceError
from campus_catalog.sources.prerequisites import UnreadablePrerequisites, parse_prerequisites

DETAILS_FRESH_FOR = timedelta(days=7)


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(fragment: str) -> str:
    """Banner's HTML fragment as plain text, entities decoded, whitespace collapsed."""
    parser = _TextOnly()
    parser.feed(fragment)
    parser.close()
    return " ".join(html.unescape(" ".join(parser.parts)).split())


async def forget_course_vectors(session: AsyncSession, course: Course) -> None:
    """Clear the vectors a new description makes stale, so the job's fill embeds them again.

    The course's text includes its description, and its sections without a title of their own
    carry a copy of the course's vector (``semantic.fill_missing_vectors``).
    """
    course.embedding = None
    await session.execute(
        update(Section).where(Section.course_id == course.id, Section.title.is_(None)).values(embedding=None)
    )


async def sync_course_details(
    sessions: async_sessionmaker[AsyncSession], settings: CatalogSettings, today: date, *, now: datetime | None = None
) -> tuple[int, dict[str, str]]:
    now = now or utcnow()
    stale_before = now - DETAILS_FRESH_FOR
    lost: dict[str, str] = {}
    done = 0
    async with sessions() as session:
        terms = list(
            await session.scalars(
                select(Term).where(Term.end_date >= today, Term.id.in_(select(Section.term_id).distinct()))
            )
        )
        subject_codes = {s.name: s.code for s in await session.scalars(select(Subject))}
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
            for course_id, crn in rows:
                try:
                    description = html_text(await banner.course_description(term.uid, crn))
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
                    if description and not description.lower().startswith("no course description"):
                        if description != course.description:
                            await forget_course_vectors(session, course)
                        course.description = description
                    try:
                        course.prerequisites = parse_prerequisites(prerequisites_page, subject_codes)
                    except UnreadablePrerequisites as exc:
                        # Final for this week: the page is kept as it was, the course says why.
                        lost[f"CRN {crn}"] = f"parse: prerequisites of {course.code}: {exc} (final)"
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
