"""Importing the real Banner fixture: every section stored with its meetings and instructors, and
a second import of the same file changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import (
    Course,
    Instructor,
    MeetingTime,
    Section,
    SectionAttribute,
    SectionInstructor,
    Subject,
    Term,
)
from campus_catalog.sources.banner_parse import parse_search_results
from campus_catalog.sources.banner_sync import import_banner_file
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import func, select, text
from sqlalchemy.orm import selectinload

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"


@pytest.fixture
def banner_fixture() -> Path:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    return BANNER_FIXTURE


def raw_page(path: Path) -> dict[str, Any]:
    page: dict[str, Any] = json.loads(path.read_text())
    return page


def write_page(path: Path, page: dict[str, Any]) -> None:
    path.write_text(json.dumps(page))


def raw_sections(path: Path) -> list[dict[str, Any]]:
    sections: list[dict[str, Any]] = json.loads(path.read_text())["data"]
    return sections


async def count(campus: CampusHarness, model: Any) -> int:
    async with campus.sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def section(campus: CampusHarness, crn: str) -> Section:
    async with campus.sessions() as session:
        found = await session.scalar(
            select(Section)
            .where(Section.crn == crn)
            .options(
                selectinload(Section.meeting_times),
                selectinload(Section.instructor_links).selectinload(SectionInstructor.instructor),
                selectinload(Section.course),
            )
        )
        assert found is not None, crn
        return found


async def snapshot(campus: CampusHarness) -> dict[str, list[tuple[Any, ...]]]:
    """Every catalog row the import writes, ids included."""
    tables = [
        "catalog_subjects",
        "catalog_courses",
        "catalog_campuses",
        "catalog_parts_of_term",
        "catalog_sections",
        "catalog_meeting_times",
        "catalog_instructors",
        "catalog_section_instructors",
        "catalog_section_attributes",
    ]
    found: dict[str, list[tuple[Any, ...]]] = {}
    async with campus.sessions() as session:
        for table in tables:
            rows = await session.execute(text(f"SELECT * FROM {table} ORDER BY 1, 2"))
            found[table] = [tuple(row) for row in rows]
    return found


def test_the_parser_keeps_every_section_of_the_fixture(banner_fixture: Path) -> None:
    parsed = parse_search_results(json.loads(banner_fixture.read_text()))
    assert len(parsed.sections) == 157 and parsed.unstorable == 0 and parsed.problems == []
    meetings = [m for s in parsed.sections for m in s.meetings]
    assert len(meetings) == 294
    assert sum(1 for m in meetings if m.start_time is None) == 24
    assert sum(1 for s in parsed.sections if not s.instructors) == 9
    assert {s.subject_description for s in parsed.sections} == {"Computer Sci & Engr"}
    assert not any("&amp;" in s.title for s in parsed.sections)


async def test_import_stores_all_157_sections_with_meetings_and_instructors(
    campus_factory: CampusFactory, banner_fixture: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    report = await import_banner_file(campus.sessions, banner_fixture)
    assert (report.created, report.updated, report.unchanged) == (157, 0, 0)
    assert report.lost() == {}
    assert await count(campus, Section) == 157
    # One meeting row per weekday; a meeting with no day is one row.
    expected_rows = sum(
        max(
            1,
            sum(
                m["meetingTime"][d] is True
                for d in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
            ),
        )
        for s in raw_sections(banner_fixture)
        for m in s["meetingsFaculty"]
    )
    assert await count(campus, MeetingTime) == expected_rows
    assert await count(campus, SectionInstructor) == 148  # 157 sections, 9 without an instructor

    async with campus.sessions() as session:
        term = await session.scalar(select(Term).where(Term.uid == "202131"))
        assert term is not None
        assert term.name == "Fall 2021 - College Station"
        assert (term.start_date.isoformat(), term.end_date.isoformat()) == ("2021-08-30", "2021-12-15")
        assert term.catalog_imported_at is not None and term.sections_synced_at is None
        subject = await session.get(Subject, 1)
        assert subject is not None and subject.name == "Computer Sci & Engr"

    lab_and_lecture = await section(campus, "45405")
    assert lab_and_lecture.course.code == "CSCE 110"
    assert lab_and_lecture.capacity == 21 and lab_and_lecture.seats_available == 0
    assert lab_and_lecture.credits_min == lab_and_lecture.credits_max == 4
    rows = sorted(
        (m.meeting_type, m.weekday, m.start_minute, m.end_minute, m.building, m.room)
        for m in lab_and_lecture.meeting_times
    )
    assert rows == [
        ("Laboratory", 4, 8 * 60 + 20, 10 * 60, "ZACH", "582"),
        ("Lecture", 0, 13 * 60 + 50, 14 * 60 + 40, "HRBB", "124"),
        ("Lecture", 2, 13 * 60 + 50, 14 * 60 + 40, "HRBB", "124"),
        ("Lecture", 4, 13 * 60 + 50, 14 * 60 + 40, "HRBB", "124"),
    ]
    assert [(link.instructor.name, link.is_primary) for link in lab_and_lecture.instructor_links] == [
        ("Ki Hwan K. Yum", True)
    ]


async def test_the_messy_cases_are_stored_not_dropped(campus_factory: CampusFactory, banner_fixture: Path) -> None:
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, banner_fixture)
    raw = {s["courseReferenceNumber"]: s for s in raw_sections(banner_fixture)}

    over_enrolled = min(raw.values(), key=lambda s: s["seatsAvailable"])
    assert over_enrolled["seatsAvailable"] < 0
    assert (await section(campus, over_enrolled["courseReferenceNumber"])).seats_available == over_enrolled[
        "seatsAvailable"
    ]

    no_capacity = next(s for s in raw.values() if s["maximumEnrollment"] == 0)
    assert (await section(campus, no_capacity["courseReferenceNumber"])).capacity == 0

    no_instructor = next(s for s in raw.values() if not s["faculty"])
    assert (await section(campus, no_instructor["courseReferenceNumber"])).instructor_links == []

    untimed = next(s for s in raw.values() if any(m["meetingTime"]["beginTime"] is None for m in s["meetingsFaculty"]))
    stored = await section(campus, untimed["courseReferenceNumber"])
    assert any(m.start_minute is None and m.end_minute is None for m in stored.meeting_times)

    online = next(s for s in raw.values() if any(m["meetingTime"]["room"] == "ONLINE" for m in s["meetingsFaculty"]))
    stored = await section(campus, online["courseReferenceNumber"])
    assert any(m.building_name == "Online" and m.room is None for m in stored.meeting_times)

    async with campus.sessions() as session:
        titles = set((await session.scalars(select(Course.title))).all())
    assert "PROGRAM DESIGN & CONCEPTS" in titles and not any("&amp;" in t for t in titles)


async def test_a_second_import_of_the_same_file_changes_nothing(
    campus_factory: CampusFactory, banner_fixture: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, banner_fixture)
    before = await snapshot(campus)
    report = await import_banner_file(campus.sessions, banner_fixture)
    assert (report.created, report.updated, report.unchanged) == (0, 0, 157)
    assert await snapshot(campus) == before
    assert await count(campus, Instructor) == len(before["catalog_instructors"])
    assert await count(campus, SectionAttribute) == len(before["catalog_section_attributes"])


async def test_a_section_that_cannot_be_mapped_fully_is_kept_and_reported_by_crn(
    campus_factory: CampusFactory, banner_fixture: Path, tmp_path: Path
) -> None:
    page = raw_page(banner_fixture)
    page["data"][0]["meetingsFaculty"][0]["meetingTime"]["beginTime"] = "8:2O"  # a typo upstream
    page["data"][1]["seatsAvailable"] = "lots"
    del page["data"][2]["courseReferenceNumber"]
    broken = tmp_path / "broken.json"
    write_page(broken, page)
    campus = await campus_factory(plugins=["catalog"])
    report = await import_banner_file(campus.sessions, broken)
    assert report.stored == 156
    # Only the row that was not stored is lost; the two stored with a gap are gaps (issue 24, point 12).
    assert report.lost() == {f"id {page['data'][2]['id']}": "no courseReferenceNumber; cannot be stored"}
    gaps = report.gaps()
    assert (
        gaps[f"CRN {page['data'][0]['courseReferenceNumber']}"]
        == "meeting 1: time '8:2O' is not HHMM; stored without times"
    )
    assert "seatsAvailable" in gaps[f"CRN {page['data'][1]['courseReferenceNumber']}"]
