"""Rows to answers: the one place a section, an instructor or a review is turned into JSON, so
every tool, route and GraphQL field that shows one shows the same fields."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from campus_mcp import student_text
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload
from sqlalchemy.orm.interfaces import LoaderOption

from campus_catalog.models import (
    Instructor,
    MeetingTime,
    Review,
    Section,
    SectionInstructor,
)
from campus_catalog.queries.clock import days_string, hhmm, twelve_hour
from campus_catalog.schemas import (
    NOT_LOADED,
    AttributeOut,
    CampusOut,
    InstructorBrief,
    InstructorRef,
    MeetingOut,
    Paging,
    PartOfTermOut,
    PersonRef,
    RatingSummary,
    ReviewOut,
    Seats,
    SectionOut,
    TermRef,
    Waitlist,
)

SECTION_LOAD: tuple[LoaderOption, ...] = (
    selectinload(Section.term),
    selectinload(Section.course),
    selectinload(Section.campus),
    selectinload(Section.part_of_term),
    selectinload(Section.meeting_times),
    selectinload(Section.instructor_links).selectinload(SectionInstructor.instructor),
    selectinload(Section.attributes),
)


async def load_sections(session: AsyncSession, ids: Sequence[int]) -> list[Section]:
    """Sections by id with everything an answer shows, in the order of ``ids``."""
    if not ids:
        return []
    rows = (await session.scalars(select(Section).where(Section.id.in_(list(ids))).options(*SECTION_LOAD))).all()
    by_id = {s.id: s for s in rows}
    return [by_id[i] for i in ids if i in by_id]


def page_fields(paging: Paging, total: int) -> dict[str, Any]:
    """The ``Page`` fields of an answer: where this page is, and where the next one starts."""
    end = paging.offset + paging.limit
    return {"total": total, "offset": paging.offset, "limit": paging.limit, "next_offset": end if end < total else None}


def meeting_patterns(meetings: Sequence[MeetingTime]) -> list[MeetingOut]:
    """One row per day back into patterns: Monday, Wednesday and Friday at 10:00 become 'MWF'."""
    groups = _grouped(
        meetings, lambda m: (m.start_minute, m.end_minute, m.start_date, m.end_date, m.building, m.room, m.meeting_type)
    )
    return [
        MeetingOut(
            days=days_string([m.weekday for m in rows if m.weekday is not None]),
            start=hhmm(key[0]),
            end=hhmm(key[1]),
            start_12h=_TWELVE_HOUR.get(key[0]),
            end_12h=_TWELVE_HOUR.get(key[1]),
            start_date=key[2],
            end_date=key[3],
            building=key[4],
            room=key[5],
            meeting_type=key[6],
        )
        for key, rows in groups
    ]


# A summary's days from the bits of its weekdays, and its 12-hour times, looked up: a page of 25
# sections formats ~50 of each, and formatting them was a good share of building the page.
_DAYS_OF_BITS = tuple(days_string([d for d in range(7) if bits >> d & 1]) for bits in range(1 << 7))
_TWELVE_HOUR: dict[int | None, str | None] = {m: twelve_hour(m) for m in [None, *range(24 * 60)]}


def meeting_summary_fields(
    meetings: Sequence[tuple[int, int | None, int | None, int | None]],
) -> list[dict[str, str | None]]:
    """``MeetingSummary`` fields of meeting rows ``(id, weekday, start_minute, end_minute)``: one per
    distinct start and end, in the order of their first meeting row: a lecture MWF and a lab on R at
    another time are two."""
    days: dict[tuple[int | None, int | None], int] = {}
    for _id, weekday, start, end in sorted(meetings) if len(meetings) > 1 else meetings:
        bits = days.get((start, end), 0)
        days[start, end] = bits if weekday is None else bits | 1 << weekday
    return [
        {
            "days": _DAYS_OF_BITS[bits],
            "start": _TWELVE_HOUR[start] if start in _TWELVE_HOUR else twelve_hour(start),
            "end": _TWELVE_HOUR[end] if end in _TWELVE_HOUR else twelve_hour(end),
        }
        for (start, end), bits in days.items()
    ]


def _grouped(
    meetings: Sequence[MeetingTime], key: Callable[[MeetingTime], tuple[Any, ...]]
) -> list[tuple[tuple[Any, ...], list[MeetingTime]]]:
    """Meetings with the same ``key``, the groups in the order of their first meeting row."""
    groups: dict[tuple[Any, ...], list[MeetingTime]] = {}
    for m in sorted(meetings, key=lambda m: m.id):
        groups.setdefault(key(m), []).append(m)
    return list(groups.items())


def section_credits(section: Section) -> tuple[float | None, float | None]:
    """The section's own credits when Banner gives them (a 0-credit lab), else the course's."""
    if section.credits_min is not None:
        high = section.credits_max if section.credits_max is not None else section.credits_min
        return section.credits_min, high
    return section.course.credits_min, section.course.credits_max


def section_out(section: Section) -> SectionOut:
    waitlist = (
        NOT_LOADED
        if section.waitlist_capacity is None
        else Waitlist(capacity=section.waitlist_capacity, available=section.waitlist_available)
    )
    credits = section_credits(section)
    links = sorted(section.instructor_links, key=lambda link: (not link.is_primary, link.instructor.name))
    return SectionOut(
        crn=section.crn,
        term=TermRef(uid=section.term.uid, name=section.term.name),
        course_code=section.course.code,
        title=section.title or section.course.title,
        section_number=section.section_number,
        schedule_type=section.schedule_type,
        instructional_method=section.instructional_method,
        campus=CampusOut(code=section.campus.code, name=section.campus.name) if section.campus else None,
        part_of_term=(
            PartOfTermOut(
                code=section.part_of_term.code,
                name=section.part_of_term.name,
                start_date=section.part_of_term.start_date,
                end_date=section.part_of_term.end_date,
            )
            if section.part_of_term
            else None
        ),
        credits_min=credits[0],
        credits_max=credits[1],
        seats=Seats(capacity=section.capacity, enrolled=section.enrolled, available=section.seats_available),
        waitlist=waitlist,
        cancelled=section.cancelled,
        cross_listed_crns=list(section.cross_listed_crns or []),
        linked_crns=list(section.linked_crns or []),
        instructors=[
            InstructorRef(pub_id=link.instructor.pub_id, name=link.instructor.name, primary=link.is_primary)
            for link in links
        ],
        meetings=meeting_patterns(section.meeting_times),
        attributes=[
            AttributeOut(code=a.code, description=a.description)
            for a in sorted(section.attributes, key=lambda a: a.code)
        ],
    )


def where_taught(instructional_method: str | None, campus_name: str | None) -> str | None:
    """Where a student goes to class: the campus, or 'Online' when the section is taught online."""
    if (instructional_method or "").lower().startswith("online"):
        return "Online"
    return campus_name


def instructor_brief(instructor: Instructor) -> InstructorBrief:
    """Needs ``Instructor.rating`` loaded."""
    rating = instructor.rating
    return InstructorBrief(
        pub_id=instructor.pub_id,
        name=instructor.name,
        department=instructor.department,
        rating=(
            RatingSummary(
                overall=rating.overall,
                difficulty=rating.difficulty,
                would_take_again_percent=rating.would_take_again_percent,
                rating_count=rating.rating_count,
            )
            if rating
            else NOT_LOADED  # no ratings of them here: unknown, not "unrated"
        ),
    )


# Far above any review site's limit; a longer one is cut rather than filling the model's context.
REVIEW_TEXT_LENGTH = 2000


def review_out(review: Review) -> ReviewOut:
    """Needs ``Review.instructor`` loaded."""
    return ReviewOut(
        id=review.id,
        instructor=PersonRef(pub_id=review.instructor.pub_id, name=review.instructor.name),
        course_code=review.course_code,
        posted_on=review.posted_on,
        overall=review.overall,
        difficulty=review.difficulty,
        would_take_again=review.would_take_again,
        grade=review.grade,
        tags=list(review.tags or []),
        text=student_text(review.text, limit=REVIEW_TEXT_LENGTH),
        sentiment=review.sentiment,
    )
