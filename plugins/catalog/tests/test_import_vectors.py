"""After a Banner import the new sections can be found by meaning through MCP, and a model that
fails does not undo the import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from campus_catalog import semantic
from campus_catalog.models import Course, Section
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import func, select, update

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"


@pytest.fixture
def banner_file(monkeypatch: pytest.MonkeyPatch) -> Path:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    for name in ("BANNER_URL", "CALENDAR_URL", "CALENDAR_FILE"):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_FILE", str(BANNER_FIXTURE))
    return BANNER_FIXTURE


async def run_sections_sync(campus: CampusHarness) -> Any:
    job = campus.registry.jobs["catalog.sections_sync"]
    return await campus.run_job(job)


async def search(campus: CampusHarness, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await campus.call("search_sections", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_sections_of_a_banner_import_are_found_by_meaning(
    campus_factory: CampusFactory, banner_file: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    run = await run_sections_sync(campus)
    assert (run.outcome, run.items) == ("ok", 157), run.summary
    assert "vectors for" in run.summary

    page = await search(campus, {"term": "202131", "q": "databases", "semantic": True})
    # The sections about databases (semantic.RELEVANCE_FLOOR), not all 157 of the import.
    assert 0 < page["total"] < 157
    assert len(page["sections"]) == page["total"], page
    assert (page["sections"][0]["course_code"], page["sections"][0]["title"]) == ("CSCE 310", "DATABASE SYSTEMS")


async def test_a_model_that_fails_leaves_the_import_stored(
    campus_factory: CampusFactory, banner_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_texts: Any) -> list[bytes]:
        raise RuntimeError("the embedding engine could not load")

    monkeypatch.setattr(semantic, "embed_unique", broken)
    campus = await campus_factory(plugins=["catalog"])
    run = await run_sections_sync(campus)
    assert (run.outcome, run.items) == ("ok", 157), run.summary
    assert "vectors not filled (RuntimeError" in run.summary
    async with campus.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Section)) == 157


async def test_the_total_of_a_search_by_meaning_counts_only_what_it_can_rank(
    campus_factory: CampusFactory, banner_file: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    await run_sections_sync(campus)
    async with campus.sessions() as session:
        course_id = await session.scalar(select(Course.id).where(Course.title == "DATABASE SYSTEMS"))
        its_sections = await session.scalar(select(func.count()).where(Section.course_id == course_id))
        # A course whose vector is gone (a new description, before the next fill): its untitled
        # sections still hold the old copy, but the ranking uses the course's, so it skips them.
        await session.execute(update(Course).where(Course.id == course_id).values(embedding=None))
        await session.commit()
    assert its_sections

    question = {"term": "202131", "q": "databases", "semantic": True, "limit": 100}
    first = await search(campus, question)
    rest = await search(campus, {**question, "offset": 100})
    listed = [s["course_code"] for s in first["sections"] + rest["sections"]]
    assert len(listed) == first["total"]  # every section the total counts can be paged to
    assert "CSCE 310" not in listed
