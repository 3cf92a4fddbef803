"""Two questions of one shape (the same filters, other values) share SQLAlchemy's compiled
statement and the kept conditions of neither (``campus_catalog.queries.statements``): a question
answered after another of its shape gets the answer it gets alone, never the other's values
(subject, days, times, offset, limit, words)."""

from __future__ import annotations

from typing import Any

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections, statements
from campus_catalog.schemas import SectionPage, SectionSearch
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
        if isinstance(kept, statements.KeptConditions):
            kept.forget()


async def _page(campus: CampusHarness, arguments: dict[str, Any]) -> SectionPage:
    async with campus.sessions() as session:
        return await sections.search_sections(
            session, SectionSearch.model_validate(arguments), campus.settings, CatalogSettings()
        )


async def test_a_kept_statement_answers_with_the_calls_own_values(demo_campus: CampusHarness) -> None:
    for first, second in SAME_SHAPE:
        _forget_shapes()
        alone = await _page(demo_campus, second)
        _forget_shapes()
        await _page(demo_campus, first)
        after = await _page(demo_campus, second)
        assert after == alone, (first, second)
        assert after != await _page(demo_campus, first), "the pair's answers differ, so the test can see a mix-up"
