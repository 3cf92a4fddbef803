"""A search page's statement is kept per shape (``campus_mcp.ShapedStatements``, the speed-up
``statement_shapes``) and run with each call's own values: a question answered after another of
its shape gets the answer it gets alone, never the other's values (subject, days, times, offset,
limit, words). Both ways: with the speed-up off every statement is built per call, the same answers."""

from __future__ import annotations

from typing import Any

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections
from campus_catalog.schemas import SectionPage, SectionSearch
from campus_mcp import Settings, ShapedStatements
from campus_mcp.testing import CampusHarness

# Pairs of one shape: the second runs on the statement the first left.
SAME_SHAPE: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"subject": "COMP", "limit": 5}, {"subject": "MATH", "limit": 7, "offset": 3}),
    ({"limit": 25}, {"limit": 10, "offset": 40}),
    (
        {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True},
        {"days": "MWF", "begins_after": "08:00", "ends_before": "11:00", "open_only": True},
    ),
    ({"schedule_type": "lec", "campus": "online"}, {"schedule_type": "lab", "campus": "main"}),
    ({"credits": 4, "instructor": "a"}, {"credits": 1, "instructor": "e"}),
    ({"q": "introduction programming", "limit": 5}, {"q": "calculus", "limit": 5}),
]


def _forget_shapes() -> None:
    for kept in vars(sections).values():
        if isinstance(kept, ShapedStatements):
            kept.forget()


async def _page(campus: CampusHarness, settings: Settings, arguments: dict[str, Any]) -> SectionPage:
    async with campus.sessions() as session:
        return await sections.search_sections(
            session, SectionSearch.model_validate(arguments), settings, CatalogSettings()
        )


@pytest.mark.parametrize("on", [True, False], ids=["speedups-on", "speedups-off"])
async def test_a_kept_statement_answers_with_the_calls_own_values(demo_campus: CampusHarness, on: bool) -> None:
    settings = demo_campus.settings.model_copy(update={"speedups": on})
    for first, second in SAME_SHAPE:
        _forget_shapes()
        alone = await _page(demo_campus, settings, second)
        _forget_shapes()
        await _page(demo_campus, settings, first)
        after = await _page(demo_campus, settings, second)
        assert after == alone, (first, second)
        assert after != await _page(demo_campus, settings, first), "the pair's answers differ: a mix-up would show"
    # On, the last pair shared one statement; off, nothing is kept.
    assert len(sections._COURSE_SIZES) == (1 if on else 0)
