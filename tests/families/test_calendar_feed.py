"""The student's calendar as a feed (issue 12, point 7): ``/calendar/<token>.ics``.

A Fall 2030 term whose weeks cross the end of daylight saving time (Sunday, November 3, 2030),
with Veterans Day and the Thanksgiving break off and a finals week in which no class meets. The
feed is read over real HTTP, parsed and expanded with ``recurring-ical-events``, and compared
with ``busy_blocks`` (what ``my_busy_times`` answers) over the whole term: the same instants.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import pytest
import recurring_ical_events  # type: ignore[import-untyped]
from campus_catalog.models import (
    Course,
    FinalExam,
    FinalsSchedule,
    Instructor,
    MeetingTime,
    Section,
    SectionInstructor,
    Subject,
    Term,
    UniversityEvent,
)
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import parse_forms
from campus_schedule.busy import MAX_DAYS, busy_blocks
from campus_schedule.enrollment import set_term_sections
from campus_schedule.events import create_event
from campus_settings.feed import tokens
from sqlalchemy import select, text

EASTERN = ZoneInfo("America/New_York")
TERM_START, TERM_END = date(2030, 9, 3), date(2030, 12, 20)
SYNCED = datetime(2030, 8, 1, 9, 0, tzinfo=UTC)
Feed = tuple[CampusHarness, dict[str, int], Any]


async def _student(session: Any, username: str) -> int:
    await session.execute(
        text(
            "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
            "VALUES (:u, :d, :e, true, :now, 0)"
        ),
        {"u": username, "d": username.title(), "e": f"{username}@example.edu", "now": SYNCED},
    )
    return int(
        (await session.execute(text("SELECT id FROM students WHERE username = :u"), {"u": username})).scalar_one()
    )


async def _seed(session: Any) -> None:
    session.add(Subject(code="COMP", name="Computer Science", school="School of Computing"))
    await session.flush()
    comp = Course(subject_code="COMP", course_number="1000", title="Computer Science I", credits_min=4, credits_max=4)
    lab = Course(
        subject_code="COMP", course_number="1000L", title="Computer Science I Lab", credits_min=0, credits_max=0
    )
    teacher = Instructor(pub_id="ada-lovelace", name="Ada Lovelace", department="Computing")
    term = Term(uid="203110", name="Fall 2030", start_date=TERM_START, end_date=TERM_END)
    session.add_all([comp, lab, teacher, term])
    await session.flush()
    for course, crn, number, kind, days, start, end, room in (
        (comp, "51001", "01", "Lecture", "MW", 600, 650, "010"),
        (lab, "51002", "L1", "Laboratory", "R", 840, 950, "402"),
    ):
        section = Section(term_id=term.id, course_id=course.id, crn=crn, section_number=number, schedule_type=kind)
        section.instructor_links.append(SectionInstructor(instructor_id=teacher.id, is_primary=True))
        for letter in days:
            section.meeting_times.append(
                MeetingTime(
                    weekday="MTWRFSU".index(letter), start_minute=start, end_minute=end, building="WENTW", room=room
                )
            )
        session.add(section)
    schedule = FinalsSchedule(term_id=term.id, source_name="finals.pdf", status="completed", loaded_at=SYNCED)
    session.add(schedule)
    await session.flush()
    session.add(
        FinalExam(
            schedule_id=schedule.id,
            term_id=term.id,
            crn="51001",
            exam_date=date(2030, 12, 17),
            start_minute=540,
            end_minute=660,
            building="WENTW",
            room="010",
        )
    )
    for uid, title, first, last, category in (
        ("vets-2030", "Veterans Day (no classes)", date(2030, 11, 11), date(2030, 11, 11), "holiday"),
        ("thanks-2030", "Thanksgiving break", date(2030, 11, 27), date(2030, 11, 29), "holiday"),
        ("finals-2030", "Final exams", date(2030, 12, 16), date(2030, 12, 20), "finals"),
        ("drop-2030", "Last day to withdraw", date(2030, 11, 1), date(2030, 11, 1), "deadline"),
    ):
        session.add(UniversityEvent(source_uid=uid, title=title, start_date=first, end_date=last, category=category))
    await session.commit()


async def _campus(campus_factory: CampusFactory) -> tuple[CampusHarness, dict[str, int]]:
    # Seed 000's "apply": a legacy client changes at once; these tests are about the feed.
    campus = await campus_factory(plugins=["catalog", "schedule", "settings"], confirmation_fallback="apply")
    async with campus.sessions() as session:
        ids = {name: await _student(session, name) for name in ("student1", "student2")}
        await session.commit()
        await _seed(session)
        term = (await session.scalars(select(Term).where(Term.uid == "203110"))).one()
        await set_term_sections(session, ids["student1"], term, ["51001", "51002"])
        start = datetime(2030, 10, 29, 18, 0, tzinfo=EASTERN)
        await create_event(
            session,
            owner_id=ids["student2"],
            title="Study group",
            start=start,
            end=start + timedelta(hours=1),
            attendee_ids=[ids["student1"]],
        )
        await session.commit()
    return campus, ids


@pytest.fixture
async def feed(campus_factory: CampusFactory) -> AsyncIterator[Feed]:
    """The campus, its students' ids, and one HTTP client (the app's lifespan runs only once)."""
    campus, ids = await _campus(campus_factory)
    async with campus.rest() as client:
        yield campus, ids, client


async def _token(campus: CampusHarness, student: int) -> str:
    async with campus.sessions() as session:
        token = await tokens.issue(session, student)
        await session.commit()
    return token


async def _read(client: Any, token: str, **headers: str) -> Any:
    return await client.get(f"/calendar/{token}.ics", headers=headers)


def _instants(calendar: Any, first: date, last: date) -> set[tuple[datetime, datetime]]:
    """Every timed instance between the dates (all-day university events have no busy time)."""
    found = set()
    for event in recurring_ical_events.of(calendar).between(first, last + timedelta(days=1)):
        start, end = event["DTSTART"].dt, event["DTEND"].dt
        if isinstance(start, datetime):
            found.add((start.astimezone(UTC), end.astimezone(UTC)))
    return found


def _parse(body: bytes) -> Any:
    # Any: icalendar's property values are a union of some thirty types; the tests read them by name.
    return icalendar.Calendar.from_ical(body)


async def _busy(campus: CampusHarness, student: int, first: date, last: date) -> set[tuple[datetime, datetime]]:
    found: set[tuple[datetime, datetime]] = set()
    day = first
    async with campus.sessions() as session:
        while day <= last:  # busy_blocks answers at most MAX_DAYS at a time, as my_busy_times does
            chunk_end = min(day + timedelta(days=MAX_DAYS - 1), last)
            for block in await busy_blocks(session, student, day, chunk_end, campus.settings):
                found.add((block.start.astimezone(UTC), block.end.astimezone(UTC)))
            day = chunk_end + timedelta(days=1)
    return found


async def test_the_feed_expands_to_the_busy_times_over_a_whole_term_across_daylight_saving(feed: Feed) -> None:
    campus, ids, client = feed
    answer = await _read(client, await _token(campus, ids["student1"]))
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/calendar")
    calendar = _parse(answer.content)

    instants = _instants(calendar, TERM_START, TERM_END)
    busy = await _busy(campus, ids["student1"], TERM_START, TERM_END)
    assert instants == busy
    # The test means something: classes on both sides of Nov 3, none on the holidays, the final, the meeting.
    assert (datetime(2030, 10, 28, 14, 0, tzinfo=UTC), datetime(2030, 10, 28, 14, 50, tzinfo=UTC)) in instants
    assert (datetime(2030, 11, 4, 15, 0, tzinfo=UTC), datetime(2030, 11, 4, 15, 50, tzinfo=UTC)) in instants
    assert not any(start.astimezone(EASTERN).date() == date(2030, 11, 11) for start, _ in instants)
    assert not any(start.astimezone(EASTERN).date() == date(2030, 11, 27) for start, _ in instants)
    assert {start.astimezone(EASTERN).date() for start, _ in instants if start.date() >= date(2030, 12, 16)} == {
        date(2030, 12, 17)
    }
    assert (datetime(2030, 10, 29, 22, 0, tzinfo=UTC), datetime(2030, 10, 29, 23, 0, tzinfo=UTC)) in instants
    assert len(instants) > 40

    events = calendar.walk("VEVENT")
    by_title = {str(e["SUMMARY"]): e for e in events}
    assert {"COMP 1000 Lecture", "COMP 1000L Laboratory", "Final exam: COMP 1000", "Study group"} <= set(by_title)
    assert "Last day to withdraw" in by_title and "Veterans Day (no classes)" in by_title
    lecture = by_title["COMP 1000 Lecture"]
    assert "RRULE" in lecture and "EXDATE" in lecture
    assert str(lecture["LOCATION"]) == "WENTW 010"
    assert str(lecture["COLOR"]) == "dodgerblue"  # peacock, the default class color, as a CSS3 name
    assert [a["TRIGGER"].dt for a in lecture.walk("VALARM")] == [timedelta(minutes=-15)]
    assert [a["TRIGGER"].dt for a in by_title["Final exam: COMP 1000"].walk("VALARM")] == [
        timedelta(minutes=-60),
        timedelta(minutes=-1440),
    ]


async def test_the_feed_validates_as_icalendar(feed: Feed) -> None:
    campus, ids, client = feed
    answer = await _read(client, await _token(campus, ids["student1"]))
    calendar = _parse(answer.content)
    # A round trip gives the same text: nothing the parser had to guess or drop.
    assert calendar.to_ical() == answer.content
    assert str(calendar["VERSION"]) == "2.0" and "PRODID" in calendar
    zones = calendar.walk("VTIMEZONE")
    assert [str(z["TZID"]) for z in zones] == ["America/New_York"]
    assert {c.name for c in zones[0].subcomponents} == {"STANDARD", "DAYLIGHT"}
    events = calendar.walk("VEVENT")
    uids = [str(e["UID"]) for e in events]
    assert len(uids) == len(set(uids))
    for event in events:
        for required in ("UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY"):
            assert required in event, (required, event.get("SUMMARY"))
        if isinstance(event["DTSTART"].dt, datetime) and str(event["SUMMARY"]) != "Study group":
            assert event["DTSTART"].params["TZID"] == "America/New_York"
        for alarm in event.walk("VALARM"):
            assert {"ACTION", "TRIGGER", "DESCRIPTION"} <= set(alarm)
    # Stable UIDs: a second read names the same events.
    again = _parse((await _read(client, await _token(campus, ids["student1"]))).content)
    assert sorted(str(e["UID"]) for e in again.walk("VEVENT")) == sorted(uids)


async def test_a_settings_change_shows_in_the_next_read_and_paused_notifications_drop_every_alarm(feed: Feed) -> None:
    campus, ids, client = feed
    token = await _token(campus, ids["student1"])
    first = await _read(client, token)
    student = await campus.student_principal("student1")
    changed = await campus.call(
        "update_calendar_settings",
        {"level": "all_classes", "title_template": "{{course_code}} in {{building}} {{room}}", "color": "basil"},
        principal=student,
    )
    assert not changed.is_error, changed
    second = await _read(client, token, **{"If-None-Match": first.headers["etag"]})
    assert second.status_code == 200 and second.headers["etag"] != first.headers["etag"]
    lecture = next(e for e in _parse(second.content).walk("VEVENT") if "51001" in str(e.get("DESCRIPTION")))
    assert str(lecture["SUMMARY"]) == "COMP 1000 in WENTW 010"
    assert str(lecture["COLOR"]) == "forestgreen"

    paused = await campus.call("set_notifications", {"paused": True}, principal=student)
    assert not paused.is_error, paused
    third = _parse((await _read(client, token)).content)
    assert third.walk("VALARM") == []
    assert str(next(e for e in third.walk("VEVENT") if e.get("RRULE"))["SUMMARY"]).startswith("COMP 1000")


async def test_an_unchanged_feed_answers_304_to_its_etag(feed: Feed) -> None:
    campus, ids, client = feed
    token = await _token(campus, ids["student1"])
    first = await _read(client, token)
    assert first.headers["etag"].startswith('"') and first.headers["last-modified"].endswith("GMT")
    cached = await _read(client, token, **{"If-None-Match": first.headers["etag"]})
    assert cached.status_code == 304 and cached.content == b""
    assert cached.headers["etag"] == first.headers["etag"]
    weak = await _read(client, token, **{"If-None-Match": f'"other", W/{first.headers["etag"]}'})
    assert weak.status_code == 304


async def test_a_regenerated_feed_stops_the_old_url_at_once_and_only_the_hash_is_kept(feed: Feed) -> None:
    campus, ids, client = feed
    old = await _token(campus, ids["student1"])
    assert (await _read(client, old)).status_code == 200
    new = await _token(campus, ids["student1"])
    gone = await _read(client, old)
    assert gone.status_code == 404 and "regenerated" in gone.text and old not in gone.text
    assert (await _read(client, new)).status_code == 200
    async with campus.sessions() as session:
        stored = (await session.scalars(select(tokens.CalendarFeed))).all()
    assert [row.token_sha256 for row in stored] == [tokens.digest(new)]
    assert all(new not in str(value) for row in stored for value in vars(row).values())
    # A malformed or unknown token, and a path without .ics, get the same 404.
    for path in ("/calendar/nope.ics", f"/calendar/{'A' * 43}.ics", f"/calendar/{new}"):
        assert (await client.get(path)).status_code == 404


def _feed_path(html: str) -> str:
    """The path of the feed address the page shows (once, right after it was made)."""
    found = re.findall(r"/calendar/[A-Za-z0-9_-]{43}\.ics", html)
    assert len(set(found)) == 1, html
    return str(found[0])


def _hidden(html: str, action: str) -> dict[str, str]:
    form = next(f for f in parse_forms(html) if f.action == action)
    return {f.name: f.value for f in form.fields if f.kind == "hidden"}


async def test_the_student_turns_the_feed_on_regenerates_it_and_turns_it_off_on_the_dashboard(feed: Feed) -> None:
    client = feed[2]
    login = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
    await client.post("/login", data=data | {"username": "student1", "password": "demo"})
    page = await client.get("/dashboard/calendar-feed")
    assert page.status_code == 200 and "Your calendar feed is off" in page.text
    action = "/dashboard/calendar-feed/regenerate"
    made = await client.post(action, data=_hidden(page.text, action))
    assert made.status_code == 200 and made.headers["cache-control"] == "no-store"
    path = _feed_path(made.text)
    assert (await client.get(path)).status_code == 200
    again = await client.post(action, data=_hidden(made.text, action))
    assert (await client.get(path)).status_code == 404
    new_path = _feed_path(again.text)
    assert new_path != path and (await client.get(new_path)).status_code == 200
    forged = await client.post("/dashboard/calendar-feed/off", data={"csrf_token": "forged"})
    assert forged.status_code == 403 and (await client.get(new_path)).status_code == 200
    off = "/dashboard/calendar-feed/off"
    await client.post(off, data=_hidden(again.text, off))
    assert (await client.get(new_path)).status_code == 404
    assert "Your calendar feed is off" in (await client.get("/dashboard/calendar-feed")).text


async def test_the_feed_zone_is_written_as_rules_every_parser_reads_and_names_its_charset_once(feed: Feed) -> None:
    """Issue 24, point 1: ical.js reads only the first value of a comma-separated RDATE, so the zone
    is written as one yearly RRULE per observance, without a made-up first observance."""
    campus, ids, client = feed
    answer = await _read(client, await _token(campus, ids["student1"]))
    assert answer.headers["content-type"].lower().count("charset") == 1
    (zone,) = _parse(answer.content).walk("VTIMEZONE")
    observances = {c.name: c for c in zone.subcomponents}
    assert len(zone.subcomponents) == 2 and set(observances) == {"STANDARD", "DAYLIGHT"}
    assert b"RDATE" not in answer.content
    standard, daylight = observances["STANDARD"], observances["DAYLIGHT"]
    assert dict(standard["RRULE"]) == {"FREQ": ["YEARLY"], "BYMONTH": [11], "BYDAY": ["1SU"]}
    assert dict(daylight["RRULE"]) == {"FREQ": ["YEARLY"], "BYMONTH": [3], "BYDAY": ["2SU"]}
    assert (standard["TZOFFSETFROM"].td, standard["TZOFFSETTO"].td) == (timedelta(hours=-4), timedelta(hours=-5))
    assert (daylight["TZOFFSETFROM"].td, daylight["TZOFFSETTO"].td) == (timedelta(hours=-5), timedelta(hours=-4))


async def test_turning_the_feed_on_redirects_and_the_address_is_shown_once(feed: Feed) -> None:
    """Issue 24, point 8: the post's answer held the address, so a reload posted again and the
    address just copied answered 404. Now the post redirects; the page shows the address once."""
    client = feed[2]
    login = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
    await client.post("/login", data=data | {"username": "student1", "password": "demo"})
    page = await client.get("/dashboard/calendar-feed")
    action = "/dashboard/calendar-feed/regenerate"
    posted = await client.post(action, data=_hidden(page.text, action), follow_redirects=False)
    assert posted.status_code == 303 and posted.headers["location"] == "/dashboard/calendar-feed"
    assert "/calendar/" not in posted.text
    shown = await client.get("/dashboard/calendar-feed")
    path = _feed_path(shown.text)
    assert shown.headers["cache-control"] == "no-store" and 'data-copy="feed-url"' in shown.text
    assert "script-src 'self'" in shown.headers["content-security-policy"]
    reloaded = await client.get("/dashboard/calendar-feed")
    assert "/calendar/" not in reloaded.text and "Your calendar feed is on since" in reloaded.text
    assert "script-src" not in reloaded.headers["content-security-policy"]
    assert (await client.get(path)).status_code == 200
