"""search_sections, get_section and similar_sections through the real MCP client, on the small
catalog of conftest.py (Spring 2027 is the next term, Fall 2026 the current one)."""

from __future__ import annotations

from typing import Any

import pytest


async def crns(catalog: Any, /, **filters: Any) -> list[str]:
    page = await catalog.ok("search_sections", term="202720", **filters)
    return [s["crn"] for s in page["sections"]]


async def test_default_term_is_the_current_one(catalog: Any) -> None:
    page = await catalog.ok("search_sections")
    assert page["term"] == {"uid": "202710", "name": "Fall 2026"}
    assert [s["crn"] for s in page["sections"]] == ["10001"]


async def test_a_section_shows_what_a_student_needs(catalog: Any) -> None:
    page = await catalog.ok("search_sections", term="spring 2027", subject="comp", course_number="1000")
    first = page["sections"][0]
    assert first["crn"] == "20001"
    assert first["meetings"] == [{"days": "MWF", "start": "10:00 AM", "end": "10:50 AM"}]
    assert (first["open_seats"], first["capacity"]) == (0, 30)
    assert first["instructors"] == ["Ada Lovelace"]
    assert page["advisory"]["message"]
    # The rest of a section is one get_section away.
    detail = await catalog.ok("get_section", crn="20001", term="spring 2027")
    assert (detail["meetings"][0]["start"], detail["meetings"][0]["end"]) == ("10:00", "10:50")
    assert detail["seats"] == {"capacity": 30, "enrolled": 30, "available": 0}
    assert detail["waitlist"] == {"capacity": 10, "available": 4}
    assert detail["instructors"] == [{"pub_id": "ada-lovelace", "name": "Ada Lovelace", "primary": True}]
    # An unread waitlist says so, not "no waitlist" (and not null, which reads as none: issue 37, point 1).
    second = await catalog.ok("get_section", crn=page["sections"][1]["crn"], term="spring 2027")
    assert second["waitlist"] == "not loaded here"


async def test_title_words_find_the_course_a_student_means(catalog: Any) -> None:
    assert await crns(catalog, q="intro to programming") == ["20001", "20002"]
    assert await crns(catalog, q="stock market") == ["20007"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"days": "TR"}, ["20004", "20002"]),
        ({"days": "tuesday, thursday"}, ["20004", "20002"]),
        ({"free_days": "F"}, ["20004", "20005", "20002", "20003", "20007"]),
        ({"begins_after": "10:00"}, ["20005", "20006", "20001", "20002", "20003", "20007"]),
        ({"ends_before": "11am"}, ["20004", "20001", "20007"]),
        ({"begins_after": "9:30", "ends_before": "11:00"}, ["20001", "20007"]),
        # Days and times together are tested in one probe of the meetings: each still holds.
        ({"days": "TR", "begins_after": "10:00"}, ["20002"]),
        ({"free_days": "F", "ends_before": "11am"}, ["20004", "20007"]),
        ({"instructor": "hopper"}, ["20002", "20003"]),
        ({"instructor": "marie-curie"}, ["20004", "20005"]),
        ({"campus": "online"}, ["20007"]),
        ({"part_of_term": "A"}, ["20007"]),
        ({"schedule_type": "lab"}, ["20005", "20006"]),
        ({"instructional_method": "Online"}, ["20007"]),
        ({"open_only": True, "subject": "COMP"}, ["20002", "20003"]),
        ({"credits": 0}, ["20005", "20006"]),
        ({"credits": 3}, ["20007"]),
        ({"attribute": "hss"}, ["20007"]),
        ({"subject": "MATH"}, []),
        ({"subject": "MATH", "include_cancelled": True}, ["20008"]),
    ],
)
async def test_every_filter(catalog: Any, filters: dict[str, Any], expected: list[str]) -> None:
    assert await crns(catalog, **filters) == expected


async def test_paging_says_how_to_get_the_next_page(catalog: Any) -> None:
    first = await catalog.ok("search_sections", term="202720", limit=3)
    assert (first["total"], first["next_offset"], len(first["sections"])) == (7, 3, 3)
    last = await catalog.ok("search_sections", term="202720", limit=3, offset=6)
    assert (last["next_offset"], len(last["sections"])) == (None, 1)
    seen = [s["crn"] for s in first["sections"]] + [s["crn"] for s in last["sections"]]
    assert len(set(seen)) == 4


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"begins_after": "14:00", "ends_before": "10:00"}, "ends_before (10:00) must be later than begins_after"),
        ({"term": "Fall 1999"}, "Unknown term 'Fall 1999'. Pass a term uid or name from list_terms"),
        ({"days": "XYZ"}, "not a set of days"),
        ({"begins_after": "25:99"}, "not a time of day"),
        ({"limit": 500}, "limit"),
        ({"semantic": True}, "semantic=true needs q"),
        ({"subjct": "COMP"}, "subjct"),
        ({"days": "MW", "free_days": "M"}, "name the same day"),
    ],
)
async def test_bad_input_says_what_to_change(catalog: Any, arguments: dict[str, Any], says: str) -> None:
    assert says in await catalog.error("search_sections", **arguments)


async def test_get_section_with_its_linked_labs_and_final(catalog: Any) -> None:
    lecture = await catalog.ok("get_section", crn="20004")
    assert lecture["term"]["uid"] == "202720"
    assert [s["crn"] for s in lecture["linked"]] == ["20005", "20006"]
    assert lecture["part_of_term"]["code"] == "1"
    assert lecture["campus"] == {"code": "BOS", "name": "Boston"}
    assert lecture["final_exam"] is None
    full = await catalog.ok("get_section", crn="20001", term="202720")
    assert full["final_exam"]["start"] == "09:00"
    assert full["final_exam"]["room"] == "210"
    assert {s["key"] for s in full["advisory"]["data_sources"]} <= {"sections", "finals"}


async def test_get_section_gives_cancelled_sections_too(catalog: Any) -> None:
    cancelled = await catalog.ok("get_section", crn="20008")
    assert cancelled["cancelled"] is True


async def test_get_section_bad_crns(catalog: Any) -> None:
    assert "'12ab' is not a CRN" in await catalog.error("get_section", crn="12ab")
    assert "No section has CRN 99999 in any term" in await catalog.error("get_section", crn="99999")
    assert "No section has CRN 20001 in Fall 2026 (202710)" in await catalog.error(
        "get_section", crn="20001", term="202710"
    )


async def test_similar_sections_of_a_lecture_leave_out_the_same_course_s_labs(catalog: Any) -> None:
    similar = await catalog.ok("similar_sections", crn="20004")
    assert similar["section"]["course_code"] == "CHEM 1100"
    assert similar["method"] in {"meaning", "words"}
    assert all(s["course_code"] != "CHEM 1100" for s in similar["sections"])


async def test_similar_sections_of_a_full_section_start_with_the_course_s_open_sections(catalog: Any) -> None:
    # 20001 (COMP 1000-01, MWF) is full; 20002 (COMP 1000-02, TR) has seats: "at another time?"
    similar = await catalog.ok("similar_sections", crn="20001")
    first = similar["sections"][0]
    assert (first["crn"], first["same_course"], first["open_seats"]) == ("20002", True, 10)
    assert [s["course_code"] for s in similar["sections"] if s["same_course"]] == ["COMP 1000"]
    assert all(s["course_code"] != "COMP 1000" for s in similar["sections"][1:])
