"""Issue 37, point 8: times in campus time with 12-hour text beside, and the weekday beside dates,
in get_section, check_schedule, university_events and every advisory's refresh time."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo


async def test_a_section_and_a_conflict_read_on_a_12_hour_clock(catalog: Any) -> None:
    section = await catalog.ok("get_section", crn="20001", term="202720")
    [meeting] = section["meetings"]
    assert (meeting["start"], meeting["start_12h"], meeting["end_12h"]) == ("10:00", "10:00 AM", "10:50 AM")
    check = await catalog.ok("check_schedule", crns=["20001", "20003"], term="202720")
    [conflict] = check["conflicts"]
    assert conflict["overlap_12h"] == "10:30 AM-10:50 AM"
    [need] = [n for n in check["overrides_needed"] if n["override"] == "Time conflict"]
    assert "(10:30 AM-10:50 AM)" in need["reason"]
    assert check["sections"][0]["meetings"][0]["start_12h"] == "10:00 AM"


async def test_the_advisory_refresh_time_is_on_the_campus_clock(catalog: Any) -> None:
    answer = await catalog.ok("get_section", crn="20001", term="202720")
    zone = ZoneInfo("America/New_York")
    refreshed = [s for s in answer["advisory"]["data_sources"] if s["last_refresh"]]
    assert refreshed, answer["advisory"]
    for source in refreshed:
        moment = datetime.fromisoformat(source["last_refresh"])
        assert moment.utcoffset() == moment.astimezone(zone).utcoffset()  # campus offset, not +00:00
        local = moment.astimezone(zone)
        # The time in words is said once: in last_refresh_text, or in the refresh words of a source
        # that has them (seats "as of Monday, December 7, 1:26 PM, not refreshed"; issue 37 point 6).
        text = source["last_refresh_text"] or source["refresh"]
        assert f"{local:%A, %B} {local.day}, " in text, source
        assert ("AM" in text or "PM" in text) and ("(America/New_York time)" in text or "Seats as of" in text), source


async def test_calendar_events_carry_their_weekdays(catalog: Any) -> None:
    page = await catalog.ok("university_events", start_date="2020-01-01", end_date="2030-12-31")
    assert page["events"]
    for event in page["events"]:
        start = datetime.fromisoformat(event["start_date"])
        assert event["start_weekday"] == f"{start:%A}"
        assert event["end_weekday"] == f"{datetime.fromisoformat(event['end_date']):%A}"


async def test_fetched_times_are_on_the_campus_clock_with_their_text(catalog: Any) -> None:
    zone = ZoneInfo("America/New_York")
    rating = (await catalog.ok("get_instructor", pub_id="ada-lovelace"))["rating"]
    electives = (await catalog.ok("list_term_electives", term="202720"))["lists"]
    for fetched in [rating, *electives]:
        moment = datetime.fromisoformat(fetched["fetched_at"])
        local = moment.astimezone(zone)
        assert moment.utcoffset() == local.utcoffset()
        assert fetched["fetched_at_text"].startswith(f"{local:%A, %B} {local.day}, ")
