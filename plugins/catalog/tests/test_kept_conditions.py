"""A search's filter conditions are built once per distinct set of values
(``statements.KeptConditions``): a repeated question reuses them, another question gets its own,
and a caller's additions never reach the next call."""

from __future__ import annotations

from typing import Any

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section
from campus_catalog.queries import sections, statements
from campus_catalog.schemas import SectionSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy import ColumnElement


def _counting() -> tuple[statements.KeptConditions, list[tuple[Any, ...]]]:
    built: list[tuple[Any, ...]] = []

    def build(query: SectionSearch, term_id: int, teachers: list[int] | None) -> list[ColumnElement[bool]]:
        built.append((query.subject, term_id, teachers))
        return [Section.term_id == term_id, Course.subject_code == query.subject]

    return statements.KeptConditions(build), built


def test_the_same_values_are_built_once_and_other_values_again() -> None:
    kept, built = _counting()
    comp = SectionSearch(subject="COMP")
    first = kept(comp, 1, [7, 8])
    again = kept(SectionSearch(subject="COMP"), 1, [7, 8])
    assert [str(c) for c in again] == [str(c) for c in first] and len(built) == 1
    kept(SectionSearch(subject="MATH"), 1, [7, 8])
    kept(comp, 2, [7, 8])
    kept(comp, 1, [7])
    kept(SectionSearch(subject="COMP", offset=25), 1, [7, 8])  # every field is in the key
    assert len(built) == 5


def test_a_callers_additions_stay_its_own() -> None:
    kept, _built = _counting()
    query = SectionSearch(subject="COMP")
    mine = kept(query, 1, None)
    mine.append(Section.cancelled.is_(False))
    assert len(kept(query, 1, None)) == 2


def test_the_sets_kept_are_bounded() -> None:
    kept, built = _counting()
    for number in range(statements.MAX_FILTER_SETS + 10):
        kept(SectionSearch(subject=f"S{number}"), 1, None)
    assert len(kept._kept) == statements.MAX_FILTER_SETS
    kept(SectionSearch(subject="S0"), 1, None)  # the oldest went first
    assert len(built) == statements.MAX_FILTER_SETS + 11


async def test_a_search_builds_its_filters_once(demo_campus: CampusHarness) -> None:
    sections.kept_filters.forget()
    days = SectionSearch(days="TR", begins_after="10:00", ends_before="15:00", open_only=True)
    pages = []
    for query in (days, days, SectionSearch(days="MWF", begins_after="08:00", open_only=True), days):
        async with demo_campus.sessions() as session:
            pages.append(await sections.search_sections(session, query, demo_campus.settings, CatalogSettings()))
    assert len(sections.kept_filters._kept) == 2
    assert pages[0] == pages[1] == pages[3] != pages[2]
    assert all(set(m.days or "") <= set("TR") for s in pages[0].sections for m in s.meetings), pages[0].sections[:3]
