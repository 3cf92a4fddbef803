"""A search by meaning in a student's own words on real Banner imports (issue 37, point 3): the
course the student means comes first, and a search that finds nothing near says why and searches
title words instead. The campuses are TAMU's CSCE page and four subjects of TRU's term (Computing,
Psychology, History, Mathematics: 1,673 sections would take minutes to embed here), imported as
``campus-mcp import banner --file`` imports them. How well the ranking does on 50 questions over
the whole of both is measured by bench/search_in_students_words.py, not here."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from campus_mcp.testing import CampusHarness, TestDatabases

from .banner_campus import TAMU, TRU, imported_campus

TRU_SUBJECTS = {"COMP", "PSYC", "HIST", "MATH"}
IN_STUDENTS_WORDS = "how operating systems, processes and memory work"


@pytest.fixture(scope="module")
async def tamu(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    if not TAMU.is_file():
        pytest.skip(f"the Banner fixture is not at {TAMU} (../shared/fixtures of the project root)")
    harness = await imported_campus(campus_databases, TAMU)
    yield harness
    await harness.close()
    await campus_databases.drop(harness.settings.database_url)


@pytest.fixture(scope="module")
async def tru(
    campus_databases: TestDatabases, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CampusHarness]:
    if not TRU.is_file():
        pytest.skip(f"the Banner fixture is not at {TRU} (../shared/fixtures of the project root)")
    pages = [page for page in json.loads(TRU.read_text()) if page["data"][0]["subject"] in TRU_SUBJECTS]
    assert len(pages) == len(TRU_SUBJECTS)
    saved = tmp_path_factory.mktemp("tru") / "tru-201820-four-subjects.json"
    saved.write_text(json.dumps(pages))
    harness = await imported_campus(campus_databases, saved)
    yield harness
    await harness.close()
    await campus_databases.drop(harness.settings.database_url)


async def _ask(campus: CampusHarness, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await campus.call(tool, {"semantic": True, **arguments})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def _courses(page: dict[str, Any]) -> list[str]:
    """The courses of a page, in order, each once."""
    listed = (
        [s["course_code"] for s in page["sections"]] if "sections" in page else [c["code"] for c in page["courses"]]
    )
    return list(dict.fromkeys(listed))


async def test_a_question_in_a_students_words_finds_operating_systems_first(tru: CampusHarness) -> None:
    # Before: Physiology of Learning and Memory first, Operating Systems (3,1,0) second (the
    # title's contact hours and no subject in the embedded text).
    sections = await _ask(tru, "search_sections", {"term": "201820", "q": IN_STUDENTS_WORDS})
    courses = await _ask(tru, "search_courses", {"q": IN_STUDENTS_WORDS})
    assert _courses(sections)[0] == _courses(courses)[0] == "COMP 3410", (_courses(sections), _courses(courses))
    assert sections["note"] is None and courses["note"] is None
    # A few words find it first too (so they did before).
    assert _courses(await _ask(tru, "search_sections", {"term": "201820", "q": "operating systems"}))[0] == "COMP 3410"


async def test_the_question_that_found_no_section_on_tamu_finds_its_course(tamu: CampusHarness) -> None:
    # Before: total 0, no section, nothing said (every course under the fixed floor of 0.84).
    page = await _ask(tamu, "search_sections", {"term": "202131", "q": IN_STUDENTS_WORDS})
    assert page["total"] > 0 and _courses(page)[0] == "CSCE 313", page  # Intro to Computer Systems
    # And "operating systems" no longer ranks Database Systems first (the case).
    page = await _ask(tamu, "search_sections", {"term": "202131", "q": "operating systems"})
    assert _courses(page)[0] == "CSCE 313", _courses(page)


async def test_nothing_near_by_meaning_searches_title_words_and_says_so(tru: CampusHarness) -> None:
    question = "castles of the medieval kings"
    for tool in ("search_sections", "search_courses"):
        page = await _ask(tru, tool, {"q": question} | ({"term": "201820"} if tool == "search_sections" else {}))
        # Before: total 0 and nothing listed, nothing said. The course's title has "Medieval".
        assert _courses(page) == ["HIST 3520"], (tool, page)
        assert page["total"] == len(page.get("sections", page.get("courses", [])))
        assert page["note"].startswith(f"No course is near '{question}' by meaning, so these "), page["note"]
        assert "(a search by words, not by meaning)" in page["note"]


async def test_nothing_near_and_no_title_word_says_why_and_what_to_try(tamu: CampusHarness) -> None:
    page = await _ask(tamu, "search_sections", {"term": "202131", "q": "horse riding lessons"})
    assert (page["total"], page["sections"], page["next_offset"]) == (0, [], None)
    assert "no course title has its words" in page["note"], page["note"]
    assert "list_subjects" in page["note"], page["note"]


async def test_a_best_match_that_is_not_close_is_called_the_nearest(tamu: CampusHarness) -> None:
    page = await _ask(tamu, "search_courses", {"q": "research on medieval castles"})
    assert _courses(page)[0] == "CSCE 291", page  # Research: near, not what was asked
    assert "these courses are the nearest" in page["note"], page["note"]
