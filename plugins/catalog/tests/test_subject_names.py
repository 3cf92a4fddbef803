"""A subject given by name finds its sections (issue 8.7): ``{"subject": "Computer Science"}``
answered ``total: 0``. A subject's code in any case or its name in any case means the subject;
anything else is an error that lists the close matches, as an unknown term's error does. Through
the tools, and through the REST routes (the same query functions)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from campus_mcp.testing import CampusHarness

COMP_SECTIONS = ["20001", "20002", "20003"]
ONE_SUBJECT = ["Computer Science", "computer   science", "COMPUTER SCIENCE", "comp", "Comp", "COMP"]
MISTAKES: list[tuple[str, list[str]]] = [
    ("Computer Sciences", ["COMP (Computer Science)"]),
    ("compsci", ["COMP (Computer Science)"]),
    ("Mathematic", ["MATH (Mathematics)"]),
]


def _sections_url(subject: str) -> str:
    return f"/api/v1/catalog/sections?term=202720&subject={quote(subject)}"


@pytest.fixture(scope="module")
async def rest(rest_catalog_campus: CampusHarness, get_all: Any) -> dict[str, tuple[int, Any]]:
    urls = [_sections_url(subject) for subject in ONE_SUBJECT]
    urls += [_sections_url(wrong) for wrong, _ in MISTAKES]
    urls += [
        "/api/v1/catalog/courses?subject=" + quote("Computer Science"),
        "/api/v1/catalog/instructors?term=202720&subject=" + quote("computer science"),
        _sections_url("Underwater Basket Weaving"),
    ]
    answers: dict[str, tuple[int, Any]] = await get_all(rest_catalog_campus, urls)
    return answers


@pytest.mark.parametrize("subject", ONE_SUBJECT)
async def test_a_subject_name_or_code_in_any_case_finds_its_sections(
    catalog: Any, rest: dict[str, tuple[int, Any]], subject: str
) -> None:
    page = await catalog.ok("search_sections", term="202720", subject=subject)
    assert [s["crn"] for s in page["sections"]] == COMP_SECTIONS
    assert page["total"] == len(COMP_SECTIONS)
    status, body = rest[_sections_url(subject)]
    assert status == 200, body
    assert [s["crn"] for s in body["sections"]] == COMP_SECTIONS


async def test_courses_and_instructors_take_the_name_too(catalog: Any, rest: dict[str, tuple[int, Any]]) -> None:
    courses = await catalog.ok("search_courses", subject="Computer Science")
    assert [c["code"] for c in courses["courses"]] == ["COMP 1000", "COMP 2000"]
    status, body = rest["/api/v1/catalog/courses?subject=" + quote("Computer Science")]
    assert status == 200 and [c["code"] for c in body["courses"]] == ["COMP 1000", "COMP 2000"]
    teaching = await catalog.ok("search_instructors", subject="computer science", term="202720")
    assert [i["pub_id"] for i in teaching["instructors"]] == ["ada-lovelace", "grace-hopper"]
    status, body = rest["/api/v1/catalog/instructors?term=202720&subject=" + quote("computer science")]
    assert status == 200 and [i["pub_id"] for i in body["instructors"]] == ["ada-lovelace", "grace-hopper"]


@pytest.mark.parametrize(("wrong", "suggested"), MISTAKES)
async def test_an_unknown_subject_lists_the_close_matches(
    catalog: Any, rest: dict[str, tuple[int, Any]], wrong: str, suggested: list[str]
) -> None:
    text = await catalog.error("search_sections", term="202720", subject=wrong)
    assert f"Unknown subject {wrong!r}" in text
    for match in suggested:
        assert match in text
    assert "list_subjects" in text
    status, body = rest[_sections_url(wrong)]
    assert status == 400, body
    assert body["field"] == "subject"
    assert body["message"] in text  # the same words through both doors


async def test_a_subject_nothing_is_close_to_points_at_list_subjects(
    catalog: Any, rest: dict[str, tuple[int, Any]]
) -> None:
    status, body = rest[_sections_url("Underwater Basket Weaving")]
    assert status == 400, body
    assert "Unknown subject 'Underwater Basket Weaving'" in body["message"]
    assert "list_subjects" in body["message"]
    text = await catalog.error("search_courses", subject="Underwater Basket Weaving")
    assert "Unknown subject 'Underwater Basket Weaving'" in text
