"""The terms and subjects held in process (``campus_catalog.queries.lookups``) are never another
campus's, never older than a change committed in this process, never what a rolled-back session
wrote, and follow another process's change at once when the call read the data version.

"Another process" is a raw SQL insert on a plain connection: no ORM session of this process
saw it, so nothing here was told (the way another worker's import looks from this one).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from campus_catalog import data_version
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Subject, Term
from campus_catalog.queries import sections
from campus_catalog.queries.terms import known_term
from campus_catalog.schemas import SectionSearch
from campus_catalog.sources.banner_sync import import_banner_file
from campus_mcp import version_bump
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import insert

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
TERM, NAME = "202131", "Fall 2021 - College Station"  # the fixture's term, CSCE sections only


def _need_fixture() -> None:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the fixtures are not in {FIXTURES} (../shared/fixtures of the project root)")


async def _search(campus: CampusHarness, **arguments: object) -> dict[str, object]:
    result = await campus.call("search_sections", arguments)
    assert result.structured_content is not None, result.content
    return result.structured_content


async def _error(campus: CampusHarness, **arguments: object) -> str:
    result = await campus.call("search_sections", arguments)
    assert result.is_error, result.structured_content
    return str(result.content)


async def _add_term_as_another_process_would(campus: CampusHarness, uid: str, name: str, *, bump: bool) -> None:
    async with campus.deployment.engine.begin() as connection:
        await connection.execute(
            insert(Term).values(uid=uid, name=name, start_date=date(2031, 1, 10), end_date=date(2031, 5, 5))
        )
        if bump:  # another process's commit bumps the version in the same transaction
            await connection.execute(version_bump(connection.dialect.name, [data_version.KEY]))


async def test_an_import_in_this_process_is_seen_by_the_next_call(campus_factory: CampusFactory) -> None:
    _need_fixture()
    campus = await campus_factory(plugins=["catalog"])
    assert "no terms yet" in await _error(campus), "an empty catalog: nothing held yet but the empty list"
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    # The query itself first: no data version read, so only the commit's notice can tell it.
    async with campus.sessions() as session:
        found = await sections.search_sections(session, SectionSearch(term=TERM), campus.settings, CatalogSettings())
    assert found.term.name == NAME
    page = await _search(campus, term=TERM, subject="csce", limit=5)
    assert page["term"] == {"uid": TERM, "name": NAME}, "the new term and subject are found at once"
    assert page["total"] and all(s["course_code"].startswith("CSCE ") for s in page["sections"])


async def test_two_campuses_in_one_process_see_their_own_terms(campus_factory: CampusFactory) -> None:
    _need_fixture()
    banner = await campus_factory(plugins=["catalog"])
    await import_banner_file(banner.sessions, BANNER_FIXTURE)
    other = await campus_factory(plugins=["catalog"])
    async with other.sessions() as session:
        session.add(Term(uid="203110", name="Fall 2030", start_date=date(2030, 9, 3), end_date=date(2030, 12, 20)))
        session.add(Subject(code="ARTS", name="Studio Art"))
        await session.commit()
    # Both held now, one after the other, with no commit between to forget them.
    assert (await _search(banner, term=TERM, limit=1))["term"] == {"uid": TERM, "name": NAME}
    assert (await _search(other, term="203110", limit=1))["term"] == {"uid": "203110", "name": "Fall 2030"}
    assert "Unknown term '202131'" in await _error(other, term=TERM)
    assert "Unknown term '203110'" in await _error(banner, term="203110")
    assert "Unknown subject 'ARTS'" in await _error(banner, term=TERM, subject="ARTS")
    assert (await _search(other, term="203110", subject="studio art"))["total"] == 0


async def test_another_processes_new_term_is_seen_once_its_version_moved(
    campus_factory: CampusFactory,
) -> None:
    _need_fixture()
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    assert (await _search(campus, term=TERM, limit=1))["total"]

    # A tool call reads the data version (the answer cache's key): a new version reads the terms again.
    await _add_term_as_another_process_would(campus, "203120", "Spring 2031", bump=True)
    assert (await _search(campus, term="203120"))["term"] == {"uid": "203120", "name": "Spring 2031"}

    # A direct query call (no answer cache, no version read before it) compares the versions too:
    # one rule, no time for which a held table is trusted (issue 25, point 2).
    await _add_term_as_another_process_would(campus, "203130", "Summer 2031", bump=True)
    settings = campus.settings
    query = SectionSearch(term="203130")
    async with campus.sessions() as session:
        page = await sections.search_sections(session, query, settings, CatalogSettings())
    assert page.term.uid == "203130"


async def test_a_sessions_uncommitted_term_is_its_own_and_gone_after_a_rollback(campus_factory: CampusFactory) -> None:
    _need_fixture()
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    assert (await _search(campus, term=TERM, limit=1))["total"]  # the terms are held now
    async with campus.sessions() as session:
        session.add(Term(uid="209910", name="Not Yet", start_date=date(2099, 1, 1), end_date=date(2099, 5, 1)))
        await session.flush()
        assert (await known_term(session, "209910", campus.settings)).name == "Not Yet"
        await session.rollback()
    assert "Unknown term '209910'" in await _error(campus, term="209910"), "the rolled-back term was not kept"
