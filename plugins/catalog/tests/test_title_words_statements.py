"""A page of a search by title words reads its courses' sections with their summaries in one
statement (queries/sections.py, _COURSE_SUMMARIES): four statements in all, not five; and that
page is the one the two-statement way (the ids, then their summaries) gives, on every page."""

from __future__ import annotations

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections
from campus_catalog.schemas import SectionPage, SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy.ext.asyncio import AsyncSession

from . import test_query_plans as plans

WORDS = "introduction"


async def _page(campus: CampusHarness, **arguments: object) -> SectionPage:
    async with campus.sessions() as session:
        return await sections.search_sections(
            session, SectionSearch.model_validate({"q": WORDS, **arguments}), campus.settings, CatalogSettings()
        )


async def test_a_page_of_title_words_is_four_statements(demo_campus: CampusHarness) -> None:
    async def run(session: AsyncSession) -> object:
        page = await sections.search_sections(
            session, SectionSearch(q=WORDS, limit=10), demo_campus.settings, CatalogSettings()
        )
        assert len(page.sections) == 10 and page.total > 10
        return page

    await _page(demo_campus, limit=10)  # the terms held in process: not a statement of the page
    found = await plans._statements(demo_campus, run)
    # The words, the per-course counts, the titled sections, the page with its summaries.
    assert len(found) == 4, [statement for statement, _ in found]


async def test_every_page_is_the_one_of_ids_then_summaries(
    demo_campus: CampusHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    total = (await _page(demo_campus, limit=1)).total
    assert total > 12, "the pages cross courses"
    pages = [(offset, limit) for limit in (1, 3, 7) for offset in range(0, total + 2, 2)]
    at_once = [await _page(demo_campus, offset=offset, limit=limit) for offset, limit in pages]
    monkeypatch.setattr(sections, "MAX_UNSHOWN", -1)  # every page by its ids, then their summaries
    assert [await _page(demo_campus, offset=offset, limit=limit) for offset, limit in pages] == at_once
    assert any(page.sections for page in at_once) and not at_once[-1].sections
