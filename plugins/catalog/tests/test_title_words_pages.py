"""A search by title words is counted per course and reads only its page's courses; every page
is still the slice of the whole ranking: the best-matching course's sections first, each course's
in the catalog order, then the sections of other courses whose own title has the words.

The reference here is the plain reading: every match in one statement, ranked in Python."""

from __future__ import annotations

from typing import Any

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section
from campus_catalog.queries import fulltext, sections, terms
from campus_catalog.schemas import SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

WORDS = "introduction"


async def _every_match(session: AsyncSession, campus: CampusHarness, filters: dict[str, Any]) -> list[str]:
    term = await terms.resolve_term(session, None, campus.settings)
    query = SectionSearch.model_validate({"q": WORDS, **filters})
    course_ids = await fulltext.matching_ids(session, "courses", WORDS)
    rank = {course_id: position for position, course_id in enumerate(course_ids)}
    rows = (
        await session.execute(
            select(Section.crn, Section.course_id)
            .join(Course, Course.id == Section.course_id)
            .where(
                *sections.section_filters(query, term, dialect=session.get_bind().dialect.name),
                or_(Section.course_id.in_(course_ids), func.lower(Section.title).contains(WORDS)),
            )
            .order_by(*sections.CATALOG_ORDER)
        )
    ).all()
    ranked = sorted(enumerate(rows), key=lambda item: (rank.get(item[1][1], len(rank)), item[0]))
    return [row[0] for _, row in ranked]


async def test_every_page_of_title_words_is_its_slice_of_the_ranking(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        term = await terms.resolve_term(session, None, demo_campus.settings)
        course_ids = await fulltext.matching_ids(session, "courses", WORDS)
        # Two sections of a course without the words get a title that has them: they come last.
        other = await session.scalars(
            select(Section.id)
            .where(Section.term_id == term.id, Section.course_id.not_in(course_ids), Section.cancelled.is_(False))
            .order_by(Section.id)
            .limit(2)
        )
        await session.execute(
            update(Section).where(Section.id.in_(list(other))).values(title="An Introduction to Everything")
        )
        await session.commit()

        for filters in ({}, {"open_only": True}, {"credits": 3}):
            everything = await _every_match(session, demo_campus, filters)
            assert len(everything) > 8, "the pages cross courses and reach the titled sections"
            for offset, limit in ((0, 25), (3, 7), (len(everything) - 4, 10), (len(everything) + 5, 5)):
                page = await sections.search_sections(
                    session,
                    SectionSearch.model_validate({"q": WORDS, "offset": offset, "limit": limit, **filters}),
                    demo_campus.settings,
                    CatalogSettings(),
                )
                assert [s.crn for s in page.sections] == everything[offset : offset + limit], (filters, offset)
                assert page.total == len(everything), (filters, offset)
