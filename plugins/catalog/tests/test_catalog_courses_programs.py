"""search_courses, get_course, list_programs, degree_requirements, list_term_electives,
list_terms and list_subjects through the MCP client."""

from __future__ import annotations

from typing import Any

import pytest


async def test_list_terms_marks_current_and_next(catalog: Any) -> None:
    terms = await catalog.ok("list_terms")
    assert terms["current"] == {"uid": "202710", "name": "Fall 2026"}
    assert terms["next"] == {"uid": "202720", "name": "Spring 2027"}
    assert [t["uid"] for t in terms["terms"]] == ["202720", "202710", "202630"]
    spring = terms["terms"][0]
    assert (spring["is_next"], spring["is_current"], spring["section_count"]) == (True, False, 7)
    assert [p["code"] for p in spring["parts_of_term"]] == ["1", "A"]


async def test_list_subjects_counts_sections(catalog: Any) -> None:
    subjects = await catalog.ok("list_subjects", term="202720")
    counts = {s["code"]: s["section_count"] for s in subjects["subjects"]}
    assert counts == {"CHEM": 3, "COMP": 3, "MATH": 0, "MGMT": 1}
    assert subjects["term"]["uid"] == "202720"
    assert "Unknown term" in await catalog.error("list_subjects", term="Winter 1900")


@pytest.mark.parametrize(
    ("q", "first"),
    [
        ("stock market", "MGMT 3100"),
        ("intro programming", "COMP 1000"),
        ("comp 2000", "COMP 2000"),
        ("COMP2", "COMP 2000"),
        ("hash tables", "COMP 2000"),
    ],
)
async def test_search_courses_by_code_and_words(catalog: Any, q: str, first: str) -> None:
    page = await catalog.ok("search_courses", q=q)
    assert page["courses"][0]["code"] == first


async def test_search_courses_by_subject(catalog: Any) -> None:
    page = await catalog.ok("search_courses", q="COMP")
    assert [c["code"] for c in page["courses"]] == ["COMP 1000", "COMP 2000"]
    assert page["total"] == 2


async def test_get_course_gives_prerequisites_with_min_grade(catalog: Any) -> None:
    course = await catalog.ok("get_course", code="comp-2000")
    prereq = course["prerequisites"]
    assert prereq["op"] == "and"
    assert prereq["items"][0] == {
        "op": None,
        "items": None,
        "course": "COMP 1000",
        "title": "Introduction to Programming",
        "test": None,
        "min_grade": "C",
        "min_score": None,
        "concurrent": None,
    }
    assert prereq["items"][1]["op"] == "or"
    assert prereq["items"][1]["items"][1]["test"] == "Math Placement"
    assert course["corequisites"] == ["COMP 2001"]
    assert course["restrictions"] == [{"kind": "include", "type": "major", "values": ["Computer Science"]}]
    assert course["fees"] == [{"description": "Lab fee", "amount": 75.0}]
    assert course["school"] == "School of Computing and Data Science"
    assert course["offered_in"] == [{"term": {"uid": "202720", "name": "Spring 2027"}, "section_count": 1}]
    assert {s["key"] for s in course["advisory"]["data_sources"]} <= {"course_details", "sections"}


async def test_get_course_says_what_it_unlocks(catalog: Any) -> None:
    course = await catalog.ok("get_course", code="COMP 1000")
    assert course["unlocks"] == [{"code": "COMP 2000", "title": "Data Structures"}]
    assert course["prerequisites"] is None


async def test_get_course_bad_codes(catalog: Any) -> None:
    assert "'programming' is not a course code" in await catalog.error("get_course", code="programming")
    assert "No course COMP 9999 is in the catalog" in await catalog.error("get_course", code="COMP 9999")


async def test_programs_and_degree_requirements(catalog: Any) -> None:
    programs = await catalog.ok("list_programs")
    assert programs["catalog_year"] == "2026-2027"
    assert programs["catalog_years"] == ["2026-2027", "2025-2026"]
    assert [p["slug"] for p in programs["programs"]] == ["computer-science-bs"]
    empty = await catalog.ok("list_programs", catalog_year="2025-2026")
    assert empty["programs"] == []
    detail = await catalog.ok("degree_requirements", slug="computer-science-bs")
    semester = detail["plans_of_study"][0]["semesters"][0]
    assert semester["label"] == "Year 1 Fall"
    assert semester["courses"][1] == {"code": None, "title": "HSS Elective", "credits": 4.0}
    assert detail["elective_lists"][0]["courses"] == ["COMP 2000", "MGMT 3100"]
    assert "The catalog years here are: 2026-2027, 2025-2026" in await catalog.error(
        "list_programs", catalog_year="2012-2013"
    )
    assert "Call list_programs" in await catalog.error("degree_requirements", slug="basket-weaving")


async def test_term_electives(catalog: Any) -> None:
    # Issue 38: by default the lists and their courses; the CRNs and each PDF's text when asked.
    electives = await catalog.ok("list_term_electives", term="202720")
    listed = electives["lists"][0]
    assert listed["course_headings"] == [{"code": "MGMT 3100", "title": "Investments", "crns": None}]
    assert listed["full_text"] is None
    full = await catalog.ok("list_term_electives", term="202720", include_full_text=True, include_crns=True)
    listed = full["lists"][0]
    assert listed["course_headings"] == [{"code": "MGMT 3100", "title": "Investments", "crns": ["20007"]}]
    assert "CRN 20007" in listed["full_text"]
    short = await catalog.ok("list_term_electives", term="202720", include_full_text=False, school="sciences")
    assert short["lists"][0]["full_text"] is None
    assert (await catalog.ok("list_term_electives", term="202720", school="management"))["lists"] == []
    assert "Unknown term" in await catalog.error("list_term_electives", term="Fall 1999")
