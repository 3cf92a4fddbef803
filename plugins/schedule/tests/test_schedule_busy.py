"""busy_blocks and the students' events (the interface the friends family builds on)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from campus_catalog.models import Term
from campus_mcp import InvalidInput
from campus_mcp.testing import CampusHarness
from campus_schedule.busy import busy_blocks
from campus_schedule.enrollment import enrolled_sections, set_term_sections
from campus_schedule.events import create_event, delete_event
from sqlalchemy import select

EASTERN = ZoneInfo("America/New_York")


async def _enroll(campus: CampusHarness, student: int, term_uid: str, crns: list[str]) -> None:
    async with campus.sessions() as session:
        term = (await session.scalars(select(Term).where(Term.uid == term_uid))).one()
        await set_term_sections(session, student, term, crns)


async def test_a_ten_oclock_class_stays_ten_oclock_across_the_end_of_daylight_saving(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    await _enroll(schedule_campus, ids["student1"], "203110", ["51001"])
    async with schedule_campus.sessions() as session:
        # Monday Oct 28 .. Wednesday Nov 13, 2030: DST ends Sunday Nov 3; Monday Nov 11 is Veterans Day.
        blocks = await busy_blocks(
            session, ids["student1"], date(2030, 10, 28), date(2030, 11, 13), schedule_campus.settings
        )
    days = [b.start.date() for b in blocks]
    assert days == [date(2030, 10, 28), date(2030, 10, 30), date(2030, 11, 4), date(2030, 11, 6), date(2030, 11, 13)]
    assert {b.start.astimezone(EASTERN).time() for b in blocks} == {time(10, 0)}
    assert {b.end.astimezone(EASTERN).time() for b in blocks} == {time(10, 50)}
    # The wall clock stays, the UTC offset moves: 14:00 UTC before, 15:00 UTC after.
    assert blocks[0].start.astimezone(UTC).hour == 14 and blocks[2].start.astimezone(UTC).hour == 15
    assert blocks[0].kind == "class" and blocks[0].detail["course_code"] == "COMP 1000"


async def test_finals_week_has_the_exam_and_no_class(schedule_campus: CampusHarness, ids: dict[str, int]) -> None:
    await _enroll(schedule_campus, ids["student1"], "203110", ["51001"])
    async with schedule_campus.sessions() as session:
        blocks = await busy_blocks(
            session, ids["student1"], date(2030, 12, 16), date(2030, 12, 20), schedule_campus.settings
        )
    assert [(b.kind, b.start.astimezone(EASTERN).replace(tzinfo=None)) for b in blocks] == [
        ("final", datetime(2030, 12, 17, 9, 0))
    ]


async def test_meetings_owned_or_attended_are_busy_and_only_the_owner_deletes(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    start = datetime(2030, 10, 29, 18, 0, tzinfo=EASTERN)
    async with schedule_campus.sessions() as session:
        event = await create_event(
            session,
            owner_id=ids["student1"],
            title="Study group",
            start=start,
            end=start + timedelta(hours=1),
            attendee_ids=[ids["student2"]],
        )
        await session.commit()
    for who in ("student1", "student2"):
        async with schedule_campus.sessions() as session:
            blocks = await busy_blocks(
                session, ids[who], date(2030, 10, 29), date(2030, 10, 29), schedule_campus.settings
            )
        assert [(b.kind, b.detail["title"], b.start) for b in blocks] == [("meeting", "Study group", start)]
    async with schedule_campus.sessions() as session:
        assert (
            await busy_blocks(
                session, ids["student3"], date(2030, 10, 29), date(2030, 10, 29), schedule_campus.settings
            )
            == []
        )
        assert not await delete_event(session, owner_id=ids["student2"], event_id=event.id)
        assert await delete_event(session, owner_id=ids["student1"], event_id=event.id)
        await session.commit()
        assert (
            await busy_blocks(
                session, ids["student2"], date(2030, 10, 29), date(2030, 10, 29), schedule_campus.settings
            )
            == []
        )


@pytest.mark.parametrize(
    ("start", "end", "words"),
    [
        (date(2030, 10, 1), date(2031, 2, 1), "at most 120 days"),
        (date(2030, 10, 2), date(2030, 10, 1), "before start_date"),
    ],
)
async def test_a_long_or_reversed_range_says_the_limit(
    schedule_campus: CampusHarness, ids: dict[str, int], start: date, end: date, words: str
) -> None:
    async with schedule_campus.sessions() as session:
        with pytest.raises(InvalidInput, match=words):
            await busy_blocks(session, ids["student1"], start, end, schedule_campus.settings)


async def test_a_bad_entry_changes_nothing_and_says_which_and_why(
    schedule_campus: CampusHarness, ids: dict[str, int]
) -> None:
    await _enroll(schedule_campus, ids["student1"], "202710", ["21001"])
    with pytest.raises(InvalidInput) as caught:
        await _enroll(schedule_campus, ids["student1"], "202710", ["21002", "21004", "41001", "99999"])
    message = caught.value.message
    assert "Nothing was changed" in message
    assert "CRN 21004 is cancelled" in message
    assert "CRN 41001 is a section of Spring 2027, not of Fall 2026" in message
    assert "CRN 99999 is not a section the campus knows" in message
    async with schedule_campus.sessions() as session:
        assert [s.crn for s in await enrolled_sections(session, ids["student1"], "202710")] == ["21001"]
