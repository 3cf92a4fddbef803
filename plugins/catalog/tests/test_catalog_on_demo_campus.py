"""The catalog tools on the demo campus, through the MCP client: what a student asks finds what
they mean, and check_schedule finds the conflicts and missing labs that the demo's real meeting
patterns produce. Read-only: the demo campus is shared by the test session."""

from __future__ import annotations

from typing import Any

from campus_mcp.testing import CampusHarness


async def ask(campus: CampusHarness, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result = await campus.call(tool, arguments)
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    assert result.structured_content is not None
    return result.structured_content


async def test_title_words_find_intro_to_programming(demo_campus: CampusHarness) -> None:
    courses = await ask(demo_campus, "search_courses", q="intro to programming")
    assert "Programming" in courses["courses"][0]["title"]
    sections = await ask(demo_campus, "search_sections", q="intro to programming", limit=5)
    assert sections["sections"], "the current term has no section of an intro programming course"
    assert all("Programming" in s["title"] for s in sections["sections"])


async def test_meaning_finds_a_class_about_the_stock_market(demo_campus: CampusHarness) -> None:
    found = await ask(demo_campus, "search_courses", q="a class about the stock market", semantic=True, limit=3)
    text = " ".join(f"{c['title']} {c['description'] or ''}" for c in found["courses"]).lower()
    assert any(word in text for word in ("invest", "stock", "market", "trading")), found["courses"]


async def test_two_sections_at_the_same_hour_conflict_for_their_whole_length(demo_campus: CampusHarness) -> None:
    page = await ask(demo_campus, "search_sections", days="MWF", begins_after="10:00", ends_before="10:50", limit=100)
    mwf = [
        s
        for s in page["sections"]
        if [(m["days"], m["start"], m["end"]) for m in s["meetings"]] == [("MWF", "10:00 AM", "10:50 AM")]
    ]
    assert len(mwf) >= 2, "the demo campus has fewer than two MWF 10:00 sections"
    first, second = mwf[:2]
    check = await ask(demo_campus, "check_schedule", crns=[first["crn"], second["crn"]], term=page["term"]["uid"])
    assert [(c["days"], c["overlap_minutes"]) for c in check["conflicts"]] == [("MWF", 50)]
    assert check["overrides_needed"][0]["override"] == "Time conflict"


async def test_a_lecture_without_its_lab_is_flagged(demo_campus: CampusHarness) -> None:
    page = await ask(demo_campus, "search_sections", schedule_type="Lecture", limit=100)
    # A search lists the few fields of each section; its labs are in get_section.
    lecture = None
    for found in page["sections"]:
        lecture = await ask(demo_campus, "get_section", crn=found["crn"], term=page["term"]["uid"])
        if lecture["linked_crns"]:
            break
    assert lecture is not None and lecture["linked_crns"], "no lecture of the demo's term has a lab"
    check = await ask(demo_campus, "check_schedule", crns=[lecture["crn"]], term=page["term"]["uid"])
    [pair] = check["lab_pairs"]
    assert pair["missing"] is True
    assert pair["options"] == lecture["linked_crns"]
    both = await ask(
        demo_campus, "check_schedule", crns=[lecture["crn"], lecture["linked_crns"][0]], term=page["term"]["uid"]
    )
    assert all(not p["missing"] for p in both["lab_pairs"])


async def test_an_instructors_sections_are_listed_as_a_search_lists_them(demo_campus: CampusHarness) -> None:
    # get_instructor reads its sections with the search's own statement (section_rows); a student
    # comparing the two answers sees the same sections, field for field, in the same order.
    teachers = await ask(demo_campus, "search_instructors", subject="COMP", limit=5)
    assert teachers["instructors"], "the demo campus has no COMP instructor this term"
    compared = 0
    for teacher in teachers["instructors"]:
        detail = await ask(demo_campus, "get_instructor", pub_id=teacher["pub_id"])
        term = detail["term"]["uid"]
        search = await ask(demo_campus, "search_sections", instructor=teacher["pub_id"], term=term, limit=100)
        assert detail["sections"] == search["sections"], teacher["pub_id"]
        compared += len(detail["sections"])
    assert compared > 0, "none of these instructors teaches a section this term"
