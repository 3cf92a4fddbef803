"""A search lists each section as ``section_rows.summaries_of`` makes it from one row of the page
(its meetings and instructors as JSON aggregates, the page decoded and validated at once): the
summary must be what the rules say of the section itself, and the same JSON as a
``SectionSummary`` constructed field by field, for every section of the small catalog, of the
demo campus, and of a section made here to hit the awkward cases."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from campus_catalog.models import Course, Instructor, MeetingTime, Section, SectionInstructor, Term
from campus_catalog.queries import section_rows, serialize
from campus_catalog.schemas import SectionBrief, SectionSummary
from campus_mcp.testing import CampusHarness
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession


async def section_parts(session: AsyncSession, ids: Sequence[int]) -> list[section_rows.SectionParts]:
    """Sections by id, in the order of ``ids``, read in the one statement get_section and
    check_schedule read a section in (``section_rows.parts_select``), picked by id here."""
    if not ids:
        return []
    statement = section_rows.parts_select(session.get_bind().dialect.name).where(Section.id.in_(list(ids)))
    by_id = {row.id: row for row in await session.execute(statement)}
    return section_rows.parts_of([by_id[i] for i in ids if i in by_id])


async def section_briefs(session: AsyncSession, term_id: int, crns: Sequence[str]) -> list[SectionBrief]:
    """The brief form of the sections of ``crns`` in a term, from ``section_rows.BRIEF_COLUMNS``
    (the columns check_schedule's and get_section's briefs are read from)."""
    if not crns:
        return []
    statement = (
        select(*section_rows.BRIEF_COLUMNS)
        .join(Course, Course.id == Section.course_id)
        .where(Section.term_id == term_id, Section.crn.in_(list(crns)))
    )
    return [
        SectionBrief(
            crn=row.crn,
            course_code=f"{row.subject_code} {row.course_number}",
            title=row.title or row.course_title,
            section_number=row.section_number,
            schedule_type=row.schedule_type,
            cancelled=row.cancelled,
        )
        for row in await session.execute(statement)
    ]


def _clock(minutes: int | None) -> str | None:
    if minutes is None:
        return None
    hour, minute = divmod(minutes, 60)
    return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def _by_the_rules(section: Section) -> dict[str, Any]:
    """The summary written out from the loaded section: meetings grouped by start and end in the
    order of their first row, days in week order, 12-hour times, the primary instructor first."""
    groups: dict[tuple[int | None, int | None], set[int]] = {}
    for meeting in sorted(section.meeting_times, key=lambda m: m.id):
        days = groups.setdefault((meeting.start_minute, meeting.end_minute), set())
        if meeting.weekday is not None:
            days.add(meeting.weekday)
    links = sorted(section.instructor_links, key=lambda link: (not link.is_primary, link.instructor.name))
    online = (section.instructional_method or "").lower().startswith("online")
    return {
        "crn": section.crn,
        "course_code": f"{section.course.subject_code} {section.course.course_number}",
        "title": section.title or section.course.title,
        "section_number": section.section_number,
        "schedule_type": section.schedule_type,
        "meetings": [
            {"days": "".join("MTWRFSU"[d] for d in sorted(days)), "start": _clock(start), "end": _clock(end)}
            for (start, end), days in groups.items()
        ],
        "instructors": [link.instructor.name for link in links],
        "open_seats": section.seats_available,
        "capacity": section.capacity,
        "campus": "Online" if online else (section.campus.name if section.campus else None),
        "cancelled": section.cancelled,
    }


async def _check_every_section(session: AsyncSession) -> int:
    ids = list((await session.scalars(select(Section.id).order_by(Section.id))).all())
    summaries = await section_rows.section_summaries(session, ids)
    loaded = await serialize.load_sections(session, ids)
    assert [s.crn for s in summaries] == [s.crn for s in loaded]
    for summary, section in zip(summaries, loaded, strict=True):
        expected = _by_the_rules(section)
        assert summary.model_dump() == expected, section.crn
        # Validated with the page, the same bytes as constructed alone (what every client reads).
        assert summary.model_dump_json() == SectionSummary(**expected).model_dump_json(), section.crn
        assert summary.model_fields_set == set(SectionSummary.model_fields)
    return len(ids)


async def test_every_summary_is_the_section_by_the_rules(catalog_campus: CampusHarness) -> None:
    async with catalog_campus.sessions() as session:
        assert await _check_every_section(session) >= 9


async def test_every_demo_summary_is_the_section_by_the_rules(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        assert await _check_every_section(session) > 1000


async def test_awkward_meetings_and_instructors(catalog_campus: CampusHarness) -> None:
    """Meetings with no day or no times, groups whose rows interleave, midnight and noon, three
    instructors (the primary last by name), a title of its own: made in a session that is rolled
    back, so the shared catalog is left as it was."""
    async with catalog_campus.sessions() as session:
        term_id = await session.scalar(select(Term.id).where(Term.uid == "202720"))
        course_id = await session.scalar(select(Course.id).order_by(Course.id).limit(1))
        made = Section(
            term_id=term_id,
            course_id=course_id,
            crn="29999",
            section_number="X9",
            title="Ünïcode — a title of its own",
            schedule_type=None,
            instructional_method="online (synchronous)",
            capacity=None,
            seats_available=None,
            cancelled=False,
        )
        for weekday, start, end in [(4, 0, 50), (1, 720, 795), (0, 0, 50), (None, None, None), (3, 720, 795)]:
            made.meeting_times.append(MeetingTime(weekday=weekday, start_minute=start, end_minute=end))
        made.meeting_times.append(MeetingTime(weekday=6, start_minute=1380, end_minute=1439))
        people = [Instructor(pub_id=f"p2-{name}", name=name) for name in ("Zoe Zed", "Al Able", "Mo Mid")]
        session.add_all([made, *people])
        await session.flush()
        for person, primary in zip(people, (True, False, False), strict=True):
            session.add(SectionInstructor(section_id=made.id, instructor_id=person.id, is_primary=primary))
        await session.flush()

        (summary,) = await section_rows.section_summaries(session, [made.id])
        assert summary.model_dump() == {
            "crn": "29999",
            "course_code": summary.course_code,
            "title": "Ünïcode — a title of its own",
            "section_number": "X9",
            "schedule_type": None,
            "meetings": [
                {"days": "MF", "start": "12:00 AM", "end": "12:50 AM"},
                {"days": "TR", "start": "12:00 PM", "end": "1:15 PM"},
                {"days": "", "start": None, "end": None},
                {"days": "U", "start": "11:00 PM", "end": "11:59 PM"},
            ],
            "instructors": ["Zoe Zed", "Al Able", "Mo Mid"],
            "open_seats": None,
            "capacity": None,
            "campus": "Online",
            "cancelled": False,
        }
        assert await _check_every_section(session) >= 10
        await session.rollback()
    async with catalog_campus.sessions() as session:
        assert await session.scalar(select(Section.id).where(Section.crn == "29999")) is None


async def test_every_answer_read_in_one_statement_is_that_of_the_loaded_section(demo_campus: CampusHarness) -> None:
    """get_section and check_schedule read a section, its meetings, instructors and attributes in
    one statement (``section_rows.parts_select``): the answer is ``serialize.section_out`` of the
    ORM-loaded section, and the meetings' dates are dates (the schedule checks compare them)."""
    async with demo_campus.sessions() as session:
        ids = list((await session.scalars(select(Section.id).order_by(Section.id))).all())
        parts = await section_parts(session, ids)
        loaded = await serialize.load_sections(session, ids)
        assert [section_rows.answer_of(p).model_dump_json() for p in parts] == [
            serialize.section_out(s).model_dump_json() for s in loaded
        ]
        dated = [m for p in parts for m in p.meetings if m.start_date is not None]
        assert dated, "the demo campus has meetings with dates"
        assert all(isinstance(m.start_date, date) and isinstance(m.end_date, date | None) for m in dated)
        assert all(isinstance(t.is_primary, bool) for p in parts for t in p.teachers)


async def test_no_rows_no_summaries(catalog_campus: CampusHarness) -> None:
    assert section_rows.summaries_of([]) == []
    async with catalog_campus.sessions() as session:
        assert await section_rows.section_summaries(session, [-1]) == []
        assert await section_parts(session, [-1]) == []


async def test_briefs_are_those_of_each_calls_term_and_crns(catalog_campus: CampusHarness) -> None:
    """Each call gets its own term's and CRNs' sections' briefs."""
    async with catalog_campus.sessions() as session:
        spring = await session.scalar(select(Term.id).where(Term.uid == "202720"))
        fall = await session.scalar(select(Term.id).where(Term.uid == "202710"))
        assert spring is not None and fall is not None
        labs = await section_briefs(session, spring, ["20005", "20006"])
        assert sorted(b.crn for b in labs) == ["20005", "20006"]
        assert [b.crn for b in await section_briefs(session, fall, ["10001", "20005"])] == ["10001"]
        assert [b.crn for b in await section_briefs(session, spring, ["20004"])] == ["20004"]
        assert await section_briefs(session, spring, []) == []
