"""The academic calendar from iCalendar: the registrar's fixture and the awkward parts of the format."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from campus_catalog.models import UniversityEvent
from campus_catalog.sources.calendar_ics import import_calendar, parse_calendar
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import select

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
CALENDAR_FIXTURE = FIXTURES / "academic-calendar-princeton-2022-2023.ics"
ZONE = "America/New_York"


@pytest.fixture
def calendar_fixture() -> Path:
    if not CALENDAR_FIXTURE.is_file():
        pytest.skip(f"the calendar fixture is not at {CALENDAR_FIXTURE} (../shared/fixtures of the project root)")
    return CALENDAR_FIXTURE


def rename_one_uid(source: Path, target: Path) -> None:
    """The registrar deleted one event and added another."""
    text = source.read_text()
    target.write_text(text.replace("UID:ps_events:2941:delta:0", "UID:ps_events:2941:delta:1", 1))


async def events(campus: CampusHarness) -> dict[str, UniversityEvent]:
    async with campus.sessions() as session:
        rows = (await session.scalars(select(UniversityEvent))).all()
    return {row.source_uid or "": row for row in rows}


async def test_the_registrars_calendar_is_stored_with_the_right_dates(
    campus_factory: CampusFactory, calendar_fixture: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    report = await import_calendar(campus.sessions, ZONE, path=calendar_fixture)
    assert (report.created, report.problems) == (150, [])
    stored = await events(campus)
    assert len(stored) == 150

    one_day = stored["ps_events:2941:delta:0"]
    assert one_day.title == "Graduate Students Deadline for Spring Term Course Changes"
    assert (one_day.start_date, one_day.end_date, one_day.all_day) == (date(2022, 4, 22), date(2022, 4, 22), True)
    assert one_day.category == "deadline"
    # A folded line (the URL) comes back whole.
    assert one_day.description == (
        "Details: https://registrar.princeton.edu/events/2022/graduate-students-deadline-spring-term-course-changes"
    )

    # DTEND of an all-day event is exclusive: finals from 17 to 23 December, inclusive.
    finals = stored["ps_events:3081:delta:0"]
    assert (finals.title, finals.start_date, finals.end_date) == (
        "Fall Term Final Examinations",
        date(2022, 12, 17),
        date(2022, 12, 23),
    )
    assert finals.category == "finals"

    # Escaped commas are unescaped.
    assert any(e.title == "Opening Exercises, University Chapel" for e in stored.values())
    assert {e.category for e in stored.values() if "Recess Begins" in e.title} == {"holiday"}
    assert all(e.last_fetched_at is not None for e in stored.values())


async def test_a_second_import_updates_in_place_and_a_dropped_event_is_removed(
    campus_factory: CampusFactory, calendar_fixture: Path, tmp_path: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    await import_calendar(campus.sessions, ZONE, path=calendar_fixture)
    ids = {uid: e.id for uid, e in (await events(campus)).items()}
    again = await import_calendar(campus.sessions, ZONE, path=calendar_fixture)
    assert (again.created, again.updated, again.unchanged, again.removed) == (0, 0, 150, 0)
    assert {uid: e.id for uid, e in (await events(campus)).items()} == ids

    changed = tmp_path / "changed.ics"
    rename_one_uid(calendar_fixture, changed)
    third = await import_calendar(campus.sessions, ZONE, path=changed)
    assert (third.created, third.removed, third.unchanged) == (1, 1, 149)


def test_timed_events_zones_categories_and_broken_events() -> None:
    feed = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n"
        b"BEGIN:VEVENT\r\nUID:timed\r\nDTSTART;TZID=America/New_York:20270301T090000\r\n"
        b"DTEND;TZID=America/New_York:20270301T103000\r\nSUMMARY:Advising day\\; bring your plan\r\n"
        b"CATEGORIES:Registration,Advising\r\nLOCATION:Beatty Hall\\, room 4\r\n"
        b"DESCRIPTION:A long description that is folded across two lines because it is lon\r\n g enough\r\n"
        b"END:VEVENT\r\n"
        b"BEGIN:VEVENT\r\nUID:floating\r\nDTSTART:20270302T140000\r\nDURATION:PT1H\r\nSUMMARY:Town hall\r\nEND:VEVENT\r\n"
        b"BEGIN:VEVENT\r\nUID:no-start\r\nSUMMARY:Broken\r\nEND:VEVENT\r\n"
        b"BEGIN:VEVENT\r\nUID:weekly\r\nDTSTART;VALUE=DATE:20270104\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\n"
        b"SUMMARY:Study break\r\nEND:VEVENT\r\n"
        b"END:VCALENDAR\r\n"
    )
    parsed, problems = parse_calendar(feed, ZONE)
    by_uid = {e.uid: e for e in parsed}
    timed = by_uid["timed"]
    assert timed.title == "Advising day; bring your plan"
    assert timed.category == "registration"
    assert timed.location == "Beatty Hall, room 4"
    assert timed.description == "A long description that is folded across two lines because it is long enough"
    assert (timed.all_day, timed.starts_at, timed.ends_at) == (
        False,
        datetime(2027, 3, 1, 14, 0, tzinfo=UTC),
        datetime(2027, 3, 1, 15, 30, tzinfo=UTC),
    )
    floating = by_uid["floating"]  # no zone: the campus's local time
    assert floating.starts_at == datetime(2027, 3, 2, 19, 0, tzinfo=UTC)
    assert floating.ends_at == datetime(2027, 3, 2, 20, 0, tzinfo=UTC)
    weekly = by_uid["weekly"]
    assert (weekly.start_date, weekly.end_date, weekly.all_day, weekly.category) == (
        date(2027, 1, 4),
        date(2027, 1, 4),
        True,
        "holiday",
    )
    assert sorted((p.item, p.reason) for p in problems) == [
        ("no-start", "no DTSTART"),
        ("weekly", "repeating event (RRULE): stored once, at its first date"),
    ]
