"""The query functions behind the prompt-argument completions (seed 000, "Completions"): subject
codes with sections in a term, and course codes from their start."""

from __future__ import annotations

from campus_catalog.queries.courses import course_codes_starting_with
from campus_catalog.queries.subjects import subject_codes
from campus_mcp.testing import CampusHarness


async def test_subject_codes_of_a_term_or_of_the_current_and_future_terms(catalog_campus: CampusHarness) -> None:
    settings = catalog_campus.settings
    async with catalog_campus.sessions() as session:
        assert await subject_codes(session, "", "202720", settings) == ["CHEM", "COMP", "MGMT"]
        assert await subject_codes(session, "c", "Spring 2027", settings) == ["CHEM", "COMP"]
        assert await subject_codes(session, "co", None, settings) == ["COMP"]
        # MATH has only a cancelled section.
        assert await subject_codes(session, "MA", None, settings) == []


async def test_course_codes_from_their_start(catalog_campus: CampusHarness) -> None:
    async with catalog_campus.sessions() as session:
        assert await course_codes_starting_with(session, "comp") == ["COMP 1000", "COMP 2000"]
        assert await course_codes_starting_with(session, "COMP 2") == ["COMP 2000"]
        assert await course_codes_starting_with(session, "comp2000") == ["COMP 2000"]
        assert await course_codes_starting_with(session, "C") == ["CHEM 1100", "COMP 1000", "COMP 2000"]
        assert await course_codes_starting_with(session, "zz 1") == []
