"""check_schedule: conflicts with minutes of overlap, lecture and lab pairs, duplicates, the
overrides a plan needs, totals; and its bad input."""

from __future__ import annotations

from datetime import date
from typing import Any

from campus_catalog.models import Course, MeetingTime, Section
from campus_catalog.queries.schedule_check import find_conflicts


async def test_a_conflict_names_both_sections_days_times_and_minutes(catalog: Any) -> None:
    check = await catalog.ok("check_schedule", crns=["20001", "20003", "20004"], term="202720")
    assert check["conflicts"] == [
        {
            "first": {
                "crn": "20001",
                "course_code": "COMP 1000",
                "schedule_type": "Lecture",
                "start": "10:00",
                "end": "10:50",
            },
            "second": {
                "crn": "20003",
                "course_code": "COMP 2000",
                "schedule_type": "Lecture",
                "start": "10:30",
                "end": "11:45",
            },
            "days": "MW",
            "overlap_start": "10:30",
            "overlap_end": "10:50",
            "overlap_12h": "10:30 AM-10:50 AM",
            "overlap_minutes": 20,
            "override": "Time conflict",
        }
    ]
    overrides = {(o["override"], tuple(o["crns"])) for o in check["overrides_needed"]}
    assert overrides == {("Time conflict", ("20001", "20003")), ("Capacity or closed", ("20001",))}
    full = next(o for o in check["overrides_needed"] if o["override"] == "Capacity or closed")
    assert "join the waitlist before asking for an override" in full["reason"]
    assert "dean's office" in check["ask_for_overrides"]


async def test_a_lecture_missing_its_lab_is_flagged_with_the_labs_to_choose(catalog: Any) -> None:
    check = await catalog.ok("check_schedule", crns=["20004"], term="202720")
    assert check["lab_pairs"] == [
        {
            "crn": "20004",
            "course_code": "CHEM 1100",
            "schedule_type": "Lecture",
            "paired_crns": [],
            "missing": True,
            "options": ["20005", "20006"],
        }
    ]
    paired = await catalog.ok("check_schedule", crns="20004, 20005", term="202720")
    assert [(p["crn"], p["missing"], p["paired_crns"]) for p in paired["lab_pairs"]] == [
        ("20004", False, ["20005"]),
        ("20005", False, ["20004"]),
    ]
    # A lecture and its lab are one course, not the same course twice.
    assert paired["duplicates"] == []


async def test_totals_duplicates_unknown_and_cancelled(catalog: Any) -> None:
    check = await catalog.ok("check_schedule", crns=["20001", "20002", "20007", "20008", "29999"], term="Spring 2027")
    assert check["duplicates"] == [{"course_code": "COMP 1000", "crns": ["20001", "20002"]}]
    assert check["unknown_crns"] == ["29999"]
    assert check["cancelled_crns"] == ["20008"]
    # MWF 50 minutes + TR 75 minutes; the online section has no meeting times and is not on campus.
    assert check["totals"] == {
        "credits": 11.0,
        "hours_per_week": 5.0,
        "days_on_campus": "MTWRF",
        "days_on_campus_count": 5,
    }
    assert [s["crn"] for s in check["sections"]] == ["20001", "20002", "20007", "20008"]


def test_half_term_sections_at_the_same_hour_do_not_conflict() -> None:
    course = Course(subject_code="MATH", course_number="1000", title="Math")

    def half(crn: str, start: date, end: date) -> Section:
        section = Section(crn=crn, section_number=crn, schedule_type="Lecture", cross_listed_crns=[], linked_crns=[])
        section.course = course
        section.meeting_times = [
            MeetingTime(weekday=0, start_minute=600, end_minute=650, start_date=start, end_date=end)
        ]
        return section

    first = half("1", date(2027, 1, 4), date(2027, 2, 26))
    second = half("2", date(2027, 3, 8), date(2027, 4, 29))
    overlapping = half("3", date(2027, 2, 1), date(2027, 3, 31))
    assert find_conflicts([first, second]) == []
    assert [(c.first.crn, c.second.crn, c.overlap_minutes) for c in find_conflicts([first, overlapping])] == [
        ("1", "3", 50)
    ]


async def test_bad_input(catalog: Any) -> None:
    assert "'2000x' is not a CRN" in await catalog.error("check_schedule", crns=["20001", "2000x"])
    assert "crns" in await catalog.error("check_schedule", crns=[])
    assert "at most 20" in await catalog.error("check_schedule", crns=[str(20000 + i) for i in range(21)])
