"""Sections by id as answers, read with Core selects of exactly the columns an answer shows.

Loading ``Section`` objects with ``selectinload`` for each relationship made seven queries, one
ORM instance per row and identity-map bookkeeping, and each section row carries a vector nobody
shows. Here a page is one select (:func:`parts_select`): the sections with their course, term,
campus and part of term in one join, and their meetings, instructors and attributes as JSON
arrays from correlated subqueries on the section-id indexes. Its rows become answers directly,
their columns read by name.

The answer is the same as ``serialize.section_out`` of the loaded objects (the equality tests
between REST, GraphQL and the tools hold): the meeting patterns are grouped by
``serialize.meeting_patterns`` itself, which only reads the row's attributes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any, NamedTuple, cast

from pydantic import TypeAdapter
from sqlalchemy import BindParameter, ColumnElement, Row, Select, Text, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import (
    Campus,
    Course,
    Instructor,
    MeetingTime,
    PartOfTerm,
    Section,
    SectionAttribute,
    SectionInstructor,
    Term,
)
from campus_catalog.queries import statements
from campus_catalog.queries.serialize import meeting_patterns, meeting_summary_fields, where_taught
from campus_catalog.schemas import (
    NOT_LOADED,
    AttributeOut,
    CampusOut,
    InstructorRef,
    PartOfTermOut,
    Seats,
    SectionOut,
    SectionSummary,
    TermRef,
    Waitlist,
)

# The order sections are listed in (a search by words aside): by course, then section number, CRN.
CATALOG_ORDER = (Course.subject_code, Course.course_number, Section.section_number, Section.crn)
_SECTION_COLUMNS = (
    Section.id,
    Section.term_id,
    Section.course_id,
    Section.crn,
    Section.section_number,
    Section.title,
    Section.schedule_type,
    Section.instructional_method,
    Section.credits_min,
    Section.credits_max,
    Section.capacity,
    Section.enrolled,
    Section.seats_available,
    Section.waitlist_capacity,
    Section.waitlist_available,
    Section.cancelled,
    Section.cross_listed_crns,
    Section.linked_crns,
    Term.uid.label("term_uid"),
    Term.name.label("term_name"),
    Course.subject_code,
    Course.course_number,
    Course.title.label("course_title"),
    Course.credits_min.label("course_credits_min"),
    Course.credits_max.label("course_credits_max"),
    Campus.code.label("campus_code"),
    Campus.name.label("campus_name"),
    PartOfTerm.code.label("part_code"),
    PartOfTerm.name.label("part_name"),
    PartOfTerm.start_date.label("part_start_date"),
    PartOfTerm.end_date.label("part_end_date"),
)

# The columns ``serialize.meeting_patterns`` reads, under the model's attribute names.
_MEETING_COLUMNS = (
    MeetingTime.id,
    MeetingTime.weekday,
    MeetingTime.start_minute,
    MeetingTime.end_minute,
    MeetingTime.start_date,
    MeetingTime.end_date,
    MeetingTime.building,
    MeetingTime.room,
    MeetingTime.meeting_type,
)


class MeetingRow(NamedTuple):
    """A meeting of a section's answer, under the model's attribute names (what
    ``serialize.meeting_patterns`` and the schedule checks read)."""

    id: int
    weekday: int | None
    start_minute: int | None
    end_minute: int | None
    start_date: date | None
    end_date: date | None
    building: str | None
    room: str | None
    meeting_type: str | None


class TeacherRow(NamedTuple):
    is_primary: bool
    pub_id: str
    name: str


class AttributeRow(NamedTuple):
    code: str
    description: str | None


# What a search lists of a section (``SectionSummary``), and no more: no term, no part of term.
# summaries_of reads a row by position: a new column goes at the end, before the aggregates.
_SUMMARY_COLUMNS = (
    Section.id,
    Section.crn,
    Section.section_number,
    Section.title,
    Section.schedule_type,
    Section.instructional_method,
    Section.seats_available,
    Section.capacity,
    Section.cancelled,
    Course.subject_code,
    Course.course_number,
    Course.title.label("course_title"),
    Campus.name.label("campus_name"),
)


def row_credits(row: Row[*tuple[Any, ...]]) -> tuple[float | None, float | None]:
    """The section's own credits when Banner gives them (a 0-credit lab), else the course's
    (the rule of ``serialize.section_credits``)."""
    if row.credits_min is not None:
        return row.credits_min, row.credits_max if row.credits_max is not None else row.credits_min
    return row.course_credits_min, row.course_credits_max


# The statements of a section's answer, built once: the ids are an expanding parameter, so
# building them and SQLAlchemy's cache key of them is not paid on every call.
_IDS: BindParameter[list[int]] = bindparam("ids", expanding=True)
_SECTIONS = (
    select(*_SECTION_COLUMNS)
    .join(Term, Term.id == Section.term_id)
    .join(Course, Course.id == Section.course_id)
    .outerjoin(Campus, Campus.id == Section.campus_id)
    .outerjoin(PartOfTerm, PartOfTerm.id == Section.part_of_term_id)
)


def parts_select(dialect: str) -> Select[*tuple[Any, ...]]:
    """Sections with their meetings, instructors and attributes as JSON arrays (correlated
    subqueries on the section-id indexes): one statement for a section's answer instead of four,
    each of which was four hops to SQLite's thread (cursor, execute, fetch, close). Without a
    WHERE: the caller picks the sections (get_section by CRN, check_schedule by the plan's CRNs) and
    may add columns after these (see :func:`parts_of`)."""

    def aggregate(*columns: Any) -> Any:
        return select(json_list_text(dialect, *columns)).correlate(Section)

    meetings = aggregate(*_MEETING_COLUMNS).where(MeetingTime.section_id == Section.id)
    teachers = (
        aggregate(SectionInstructor.is_primary, Instructor.pub_id, Instructor.name)
        .join(Instructor, Instructor.id == SectionInstructor.instructor_id)
        .where(SectionInstructor.section_id == Section.id)
    )
    attributes = aggregate(SectionAttribute.code, SectionAttribute.description).where(
        SectionAttribute.section_id == Section.id
    )
    return _SECTIONS.add_columns(
        meetings.scalar_subquery().label("meetings_json"),
        teachers.scalar_subquery().label("teachers_json"),
        attributes.scalar_subquery().label("attributes_json"),
    )


def _meeting(values: list[Any]) -> MeetingRow:
    # JSON has no dates: both engines give them as ISO text.
    meeting = MeetingRow(*values)
    start, end = meeting.start_date, meeting.end_date
    return meeting._replace(
        start_date=date.fromisoformat(start) if isinstance(start, str) else start,
        end_date=date.fromisoformat(end) if isinstance(end, str) else end,
    )


class SectionParts(NamedTuple):
    """A section's row (with course, term, campus and part of term) and its meeting, instructor
    and attribute rows: what :func:`answer_of` turns into an answer, and what a schedule check
    reads its meetings from."""

    row: Row[*tuple[Any, ...]]
    meetings: list[MeetingRow]
    teachers: list[TeacherRow]
    attributes: list[AttributeRow]


# Where parts_select puts the meetings', instructors' and attributes' aggregates, after the columns.
_PARTS_AT = len(_SECTION_COLUMNS)


def parts_of(rows: Sequence[Row[*tuple[Any, ...]]]) -> list[SectionParts]:
    """The parts of rows of :func:`parts_select`, in their order."""
    if not rows:
        return []
    # The aggregates of every section decoded at once, as for a page of summaries.
    aggregates = iter(_decoded([part for row in rows for part in row[_PARTS_AT : _PARTS_AT + 3]]))
    parts = []
    for row in rows:
        meetings, teachers, attributes = next(aggregates), next(aggregates), next(aggregates)
        parts.append(
            SectionParts(
                row,
                [_meeting(m) for m in meetings],
                [TeacherRow(bool(t[0]), t[1], t[2]) for t in teachers],
                [AttributeRow(*a) for a in attributes],
            )
        )
    return parts


def answer_of(parts: SectionParts) -> SectionOut:
    """The answer of one section's rows (``serialize.section_out``'s fields)."""
    return _answer(parts.row, parts.meetings, parts.teachers, parts.attributes)


def _answer(
    row: Row[*tuple[Any, ...]],
    meetings: list[MeetingRow],
    teachers: list[TeacherRow],
    attributes: list[AttributeRow],
) -> SectionOut:
    low, high = row_credits(row)
    teachers = sorted(teachers, key=lambda t: (not t.is_primary, t.name))
    return SectionOut(
        crn=row.crn,
        term=TermRef(uid=row.term_uid, name=row.term_name),
        course_code=f"{row.subject_code} {row.course_number}",
        title=row.title or row.course_title,
        section_number=row.section_number,
        schedule_type=row.schedule_type,
        instructional_method=row.instructional_method,
        campus=CampusOut(code=row.campus_code, name=row.campus_name) if row.campus_code is not None else None,
        part_of_term=(
            PartOfTermOut(
                code=row.part_code, name=row.part_name, start_date=row.part_start_date, end_date=row.part_end_date
            )
            if row.part_code is not None
            else None
        ),
        credits_min=low,
        credits_max=high,
        seats=Seats(capacity=row.capacity, enrolled=row.enrolled, available=row.seats_available),
        waitlist=(
            NOT_LOADED
            if row.waitlist_capacity is None
            else Waitlist(capacity=row.waitlist_capacity, available=row.waitlist_available)
        ),
        cancelled=row.cancelled,
        cross_listed_crns=list(row.cross_listed_crns or []),
        linked_crns=list(row.linked_crns or []),
        instructors=[InstructorRef(pub_id=t.pub_id, name=t.name, primary=t.is_primary) for t in teachers],
        # The rows carry the attribute names meeting_patterns reads; it needs no ORM object.
        meetings=meeting_patterns(cast(Sequence[MeetingTime], meetings)),
        attributes=[AttributeOut(code=a.code, description=a.description) for a in sorted(attributes, key=_code)],
    )


def _code(attribute: AttributeRow) -> str:
    return attribute.code


def json_list(dialect: str, *columns: Any) -> ColumnElement[Any]:
    """A JSON array with one array per row: the rows of a correlated subquery in one column."""
    if dialect == "postgresql":
        return func.json_agg(func.json_build_array(*columns))
    return func.json_group_array(func.json_array(*columns))


def json_list_text(dialect: str, *columns: Any) -> ColumnElement[Any]:
    """:func:`json_list` as its text, ``[]`` for no rows, on both engines, for a page's aggregates
    that :func:`_decoded` reads at once. Read as json, PostgreSQL's were decoded one by one by the
    driver's codec: 50 ``json.loads`` for a 25-section page (seen in a profile of a loaded server)
    where one for the page does. SQLite's are text already."""
    if dialect == "postgresql":
        return func.coalesce(json_list(dialect, *columns).cast(Text), "[]")
    return json_list(dialect, *columns)


def _decoded(values: Sequence[str]) -> list[list[Any]]:
    """Aggregates of json_list_text (text on both engines, ``[]`` for none) as lists, all decoded
    by one ``json.loads``."""
    decoded: list[list[Any]] = json.loads("[" + ",".join(values) + "]")
    return decoded


def summary_select(dialect: str, *extra: ColumnElement[Any]) -> Select[*tuple[Any, ...]]:
    """One statement for a page of section summaries: each section with its course and campus,
    its meetings and its instructors' names (as JSON arrays from correlated subqueries, answered
    from the section-id indexes), plus ``extra`` columns. The caller adds the WHERE and ORDER BY.

    One statement instead of one per relationship because on SQLite each statement is several
    hops to the driver's thread: under load those hops, not the reads, were the cost of a page.
    """
    meetings = (
        select(
            json_list_text(
                dialect, MeetingTime.id, MeetingTime.weekday, MeetingTime.start_minute, MeetingTime.end_minute
            )
        )
        .where(MeetingTime.section_id == Section.id)
        .correlate(Section)
        .scalar_subquery()
        .label("meetings")
    )
    teachers = (
        select(json_list_text(dialect, SectionInstructor.is_primary, Instructor.name))
        .join(Instructor, Instructor.id == SectionInstructor.instructor_id)
        .where(SectionInstructor.section_id == Section.id)
        .correlate(Section)
        .scalar_subquery()
        .label("teachers")
    )
    return (
        select(*_SUMMARY_COLUMNS, meetings, teachers, *extra)
        .join(Course, Course.id == Section.course_id)
        .outerjoin(Campus, Campus.id == Section.campus_id)
    )


# Where summary_select puts the meetings' and the instructors' aggregates, after the columns.
_MEETINGS_AT = len(_SUMMARY_COLUMNS)
_SUMMARIES = TypeAdapter(list[SectionSummary])


def summaries_of(rows: Sequence[Row[*tuple[Any, ...]]]) -> list[SectionSummary]:
    """The summaries of rows of :func:`summary_select`, in their order.

    A page at once, because per row the fixed costs were most of the work: the aggregates of the whole page are decoded by one
    ``json.loads``, each row is read as a tuple (a ``Row``'s attribute lookup is slower), and
    the page is validated by one pydantic call instead of a model constructor per section and
    per meeting. Same fields, same validation, same JSON as constructing each ``SectionSummary``.
    """
    if not rows:
        return []
    aggregates = iter(_decoded([part for row in rows for part in row[_MEETINGS_AT : _MEETINGS_AT + 2]]))
    fields = []
    for row in rows:
        (_id, crn, section_number, title, schedule_type, method, seats, capacity, cancelled) = row[:9]
        (subject_code, course_number, course_title, campus_name) = row[9:_MEETINGS_AT]
        meetings, teachers = next(aggregates), next(aggregates)
        if len(teachers) > 1:
            teachers.sort(key=_primary_first)
        fields.append(
            {
                "crn": crn,
                "course_code": f"{subject_code} {course_number}",
                "title": title or course_title,
                "section_number": section_number,
                "schedule_type": schedule_type,
                "meetings": meeting_summary_fields(meetings),
                "instructors": [name for _primary, name in teachers],
                "open_seats": seats,
                "capacity": capacity,
                "campus": where_taught(method, campus_name),
                "cancelled": cancelled,
            }
        )
    return _SUMMARIES.validate_python(fields)


def _primary_first(teacher: list[Any]) -> tuple[bool, str]:
    """The primary instructor first, then by name."""
    return (not teacher[0], teacher[1])


async def summaries_by_id(session: AsyncSession, ids: Sequence[int]) -> dict[int, SectionSummary]:
    """Sections by id as a search lists them, in one statement."""
    if not ids:
        return {}
    dialect = session.get_bind().dialect.name
    statement = _summaries_by_id.get(dialect)
    if statement is None:
        statement = _summaries_by_id[dialect] = summary_select(dialect).where(Section.id.in_(_IDS))
    rows = await statements.read_rows(session, statement, {"ids": list(ids)})
    return {row[0]: summary for row, summary in zip(rows, summaries_of(rows), strict=True)}


# summaries_by_id's statement per dialect, built once (the ids are the expanding parameter).
_summaries_by_id: dict[str, Select[*tuple[Any, ...]]] = {}


async def section_summaries(session: AsyncSession, ids: Sequence[int]) -> list[SectionSummary]:
    """Sections by id as a search lists them, in the order of ``ids``, in one statement."""
    by_id = await summaries_by_id(session, ids)
    return [by_id[i] for i in ids if i in by_id]


# The columns of a section's brief (a SectionBrief's fields), joined to its course.
BRIEF_COLUMNS = (
    Section.crn,
    Section.section_number,
    Section.title,
    Section.schedule_type,
    Section.cancelled,
    Course.subject_code,
    Course.course_number,
    Course.title.label("course_title"),
)
