"""A page of a search by title words reads its courses' sections with their summaries in one
statement (queries/sections.py: _COURSE_SUMMARIES, or _ONE_COURSE_PAGE for a page within one
course of many sections): four statements in all, not five; and every page is its slice of the
plain ranking, with the summaries the two-statement way (the ids, then their summaries) gives."""

from __future__ import annotations

import pytest
from campus_catalog import data_version
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections
from campus_catalog.schemas import SectionPage, SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans
from . import test_title_words_pages as words_pages

WORDS = "introduction"


async def _page(campus: CampusHarness, **arguments: object) -> SectionPage:
    async with campus.sessions() as session:
        return await sections.search_sections(
            session, SectionSearch.model_validate({"q": WORDS, **arguments}), campus.settings, CatalogSettings()
        )


async def _statements_of_a_page(campus: CampusHarness, **arguments: object) -> list[str]:
    async def run(session: AsyncSession) -> object:
        # As a tool call's answer cache does for its key, before the query (not counted below).
        await data_version.current(session)
        page = await sections.search_sections(
            session, SectionSearch.model_validate({"q": WORDS, **arguments}), campus.settings, CatalogSettings()
        )
        assert page.sections and page.total > len(page.sections)
        return page

    await _page(campus, **arguments)  # the terms held in process: not a statement of the page
    return [statement for statement, _ in await plans._statements(campus, run)][1:]  # all but the versions


async def test_a_page_of_title_words_is_four_statements(
    demo_campus: CampusHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The words, the per-course counts, the titled sections, the page with its summaries.
    assert len(found := await _statements_of_a_page(demo_campus, limit=10)) == 4, found
    # A page within one course whose other sections are too many to read with it.
    monkeypatch.setattr(sections, "MAX_UNSHOWN", -1)
    assert len(found := await _statements_of_a_page(demo_campus, offset=1, limit=1)) == 4, found


async def test_every_page_is_its_slice_of_the_ranking_by_every_way(
    demo_campus: CampusHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with demo_campus.sessions() as session:
        everything = await words_pages._every_match(session, demo_campus, {})
    assert len(everything) > 12, "the pages cross courses"
    pages = [(offset, limit) for limit in (1, 3, 7) for offset in range(0, len(everything) + 2, 2)]
    at_once = [await _page(demo_campus, offset=offset, limit=limit) for offset, limit in pages]
    for (offset, limit), page in zip(pages, at_once, strict=True):
        assert [s.crn for s in page.sections] == everything[offset : offset + limit], (offset, limit)
        assert page.total == len(everything)
    # A page within one course by its slice, a page across courses by its ids, then their summaries.
    monkeypatch.setattr(sections, "MAX_UNSHOWN", -1)
    assert [await _page(demo_campus, offset=offset, limit=limit) for offset, limit in pages] == at_once


@pytest.mark.parametrize("read_whole_courses", [True, False])
async def test_a_page_of_title_words_stays_on_indexes(
    demo_campus: CampusHarness, monkeypatch: pytest.MonkeyPatch, read_whole_courses: bool
) -> None:
    """Both ways of reading the page (its courses whole, or one course's slice) on indexes, on
    either engine (test_query_plans' check: no full scan of the big tables)."""
    if not read_whole_courses:
        monkeypatch.setattr(sections, "MAX_UNSHOWN", -1)

    async def run(session: AsyncSession) -> object:
        return await sections.search_sections(
            session, SectionSearch(q=WORDS, offset=1, limit=1), demo_campus.settings, CatalogSettings()
        )

    statements = await plans._statements(demo_campus, run)
    assert await plans._full_scans(demo_campus, statements) == []
