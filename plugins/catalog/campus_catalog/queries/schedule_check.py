"""Checks a plan of CRNs: time conflicts, lecture and lab pairs, the same course twice, the
overrides the plan would need, and its totals (``scheduleCheck`` of seed 000)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from campus_mcp import Settings
from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.campus_rules import campus_rules
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, MeetingTime, Section
from campus_catalog.queries import section_rows
from campus_catalog.queries.clock import days_string, hhmm, twelve_hour
from campus_catalog.queries.serialize import section_credits
from campus_catalog.queries.terms import known_term, term_ref
from campus_catalog.schemas import (
    Conflict,
    ConflictSide,
    DuplicateCourse,
    LabPair,
    OverrideNeed,
    PrerequisiteCheck,
    PrerequisiteStatus,
    ScheduleCheck,
    ScheduleCheckQuery,
    ScheduleTotals,
)
from campus_catalog.student_record import StudentRecord

# Seed 000 "Registration overrides": the names students and dean's offices use.
TIME_CONFLICT = "Time conflict"
CAPACITY = "Capacity or closed"
# Rooms and methods that mean the meeting is not on campus (Banner uses all of these).
OFF_CAMPUS_ROOMS = frozenset({"ONLINE", "INTERNET", "WEB", "REMOTE", "ASYNC"})


def _is_lab(section: Section) -> bool:
    return (section.schedule_type or "").lower().startswith("lab")


def _is_lecture(section: Section) -> bool:
    return (section.schedule_type or "").lower().startswith("lec")


def _dates_overlap(a: MeetingTime, b: MeetingTime) -> bool:
    # Two half-term sections at the same hour do not collide; unknown dates are assumed to.
    if a.start_date and a.end_date and b.start_date and b.end_date:
        return a.start_date <= b.end_date and b.start_date <= a.end_date
    return True


def _timed(section: Section) -> list[MeetingTime]:
    return [
        m
        for m in section.meeting_times
        if m.weekday is not None and m.start_minute is not None and m.end_minute is not None
    ]


def find_conflicts(sections: Sequence[Section]) -> list[Conflict]:
    conflicts: list[Conflict] = []
    for a, b in itertools.combinations(sections, 2):
        if b.crn in (a.cross_listed_crns or []):
            continue  # one class under two codes: reported as a duplicate, not a conflict
        found: dict[tuple[int, int, int, int], set[int]] = {}
        for ma in _timed(a):
            for mb in _timed(b):
                if ma.weekday != mb.weekday or not _dates_overlap(ma, mb):
                    continue
                assert ma.start_minute is not None and ma.end_minute is not None
                assert mb.start_minute is not None and mb.end_minute is not None
                if max(ma.start_minute, mb.start_minute) < min(ma.end_minute, mb.end_minute):
                    key = (ma.start_minute, ma.end_minute, mb.start_minute, mb.end_minute)
                    found.setdefault(key, set()).add(ma.weekday or 0)
        for (a_start, a_end, b_start, b_end), weekdays in sorted(found.items(), key=lambda kv: min(kv[1])):
            start, end = max(a_start, b_start), min(a_end, b_end)
            conflicts.append(
                Conflict(
                    first=ConflictSide(
                        crn=a.crn,
                        course_code=a.course.code,
                        schedule_type=a.schedule_type,
                        start=hhmm(a_start) or "",
                        end=hhmm(a_end) or "",
                    ),
                    second=ConflictSide(
                        crn=b.crn,
                        course_code=b.course.code,
                        schedule_type=b.schedule_type,
                        start=hhmm(b_start) or "",
                        end=hhmm(b_end) or "",
                    ),
                    days=days_string(weekdays),
                    overlap_start=hhmm(start) or "",
                    overlap_end=hhmm(end) or "",
                    overlap_12h=f"{twelve_hour(start)}-{twelve_hour(end)}",
                    overlap_minutes=end - start,
                    override=TIME_CONFLICT,
                )
            )
    return conflicts


async def _lab_options(session: AsyncSession, term_id: int, course_ids: set[int]) -> dict[int, list[str]]:
    """The open lab sections of each course, for lectures Banner did not link to a lab."""
    if not course_ids:
        return {}
    rows = await session.execute(
        select(Section.course_id, Section.crn)
        .where(
            Section.term_id == term_id,
            Section.course_id.in_(course_ids),
            Section.cancelled.is_(False),
            func.lower(Section.schedule_type).startswith("lab"),
        )
        .order_by(Section.section_number)
    )
    options: dict[int, list[str]] = {}
    for course_id, crn in rows:
        options.setdefault(course_id, []).append(crn)
    return options


async def lab_pairs(session: AsyncSession, sections: Sequence[Section]) -> list[LabPair]:
    in_plan = {s.crn for s in sections}
    unlinked_lectures = {s.course_id for s in sections if _is_lecture(s) and not s.linked_crns}
    term_id = sections[0].term_id if sections else 0
    labs_of = await _lab_options(session, term_id, unlinked_lectures)
    pairs: list[LabPair] = []
    for s in sections:
        if s.linked_crns:
            linked = [c for c in s.linked_crns if c != s.crn]
        elif _is_lecture(s) and labs_of.get(s.course_id):
            linked = labs_of[s.course_id]
        else:
            continue
        paired = [c for c in linked if c in in_plan]
        pairs.append(
            LabPair(
                crn=s.crn,
                course_code=s.course.code,
                schedule_type=s.schedule_type,
                paired_crns=paired,
                missing=not paired,
                options=[] if paired else linked[:10],
            )
        )
    return pairs


def duplicates(sections: Sequence[Section]) -> list[DuplicateCourse]:
    """The same course twice: two sections of one course and kind (a lecture and its lab are
    one course at many campuses, so they are not a duplicate), or two codes of one cross-list."""
    groups: dict[tuple[str, str], list[str]] = {}
    for s in sections:
        kind = "lab" if _is_lab(s) else (s.schedule_type or "").lower()
        groups.setdefault((s.course.code, kind), []).append(s.crn)
    found = [DuplicateCourse(course_code=code, crns=crns) for (code, _), crns in groups.items() if len(crns) > 1]
    for a, b in itertools.combinations(sections, 2):
        if b.crn in (a.cross_listed_crns or []):
            found.append(DuplicateCourse(course_code=f"{a.course.code} / {b.course.code}", crns=[a.crn, b.crn]))
    return found


def _seat_needs(sections: Sequence[Section], held: frozenset[str] = frozenset()) -> list[OverrideNeed]:
    needs: list[OverrideNeed] = []
    for s in sections:
        # A section the student already holds has their seat: full is no problem of theirs.
        if s.crn in held or s.seats_available is None or s.seats_available > 0:
            continue
        if s.waitlist_capacity is None:
            waitlist = "Its waitlist has not been read yet; check it in the student system first."
        elif s.waitlist_capacity == 0:
            waitlist = "It has no waitlist."
        elif (s.waitlist_available or 0) > 0:
            waitlist = f"It has a waitlist with {s.waitlist_available} open seats: join the waitlist before asking for an override."
        else:
            waitlist = "Its waitlist is full too."
        needs.append(
            OverrideNeed(override=CAPACITY, crns=[s.crn], reason=f"{s.course.code} (CRN {s.crn}) is full. {waitlist}")
        )
    return needs


def totals(sections: Sequence[Section]) -> ScheduleTotals:
    credits = sum(section_credits(s)[0] or 0.0 for s in sections)
    minutes = sum((m.end_minute or 0) - (m.start_minute or 0) for s in sections for m in _timed(s))
    on_campus: set[int] = set()
    for s in sections:
        if "online" in (s.instructional_method or "").lower():
            continue
        for m in _timed(s):
            if (m.room or "").upper() not in OFF_CAMPUS_ROOMS and (m.building or "").upper() not in OFF_CAMPUS_ROOMS:
                on_campus.add(m.weekday or 0)
    return ScheduleTotals(
        credits=round(credits, 2),
        hours_per_week=round(minutes / 60, 2),
        days_on_campus=days_string(on_campus),
        days_on_campus_count=len(on_campus),
    )


@dataclass(frozen=True)
class _CourseOf:
    code: str
    credits_min: float | None
    credits_max: float | None


@dataclass(frozen=True)
class PlannedSection:
    """A section read as rows (``section_rows.parts_select``), with the attributes of
    ``Section`` the checks above read: a plan (or a student's schedule) needs no ORM load of seven
    relationships to be checked."""

    id: int
    crn: str
    term_id: int
    course_id: int
    schedule_type: str | None
    instructional_method: str | None
    credits_min: float | None
    credits_max: float | None
    seats_available: int | None
    waitlist_capacity: int | None
    waitlist_available: int | None
    cancelled: bool
    cross_listed_crns: list[str]
    linked_crns: list[str]
    course: _CourseOf
    meeting_times: list[section_rows.MeetingRow]


def planned_section(parts: section_rows.SectionParts) -> PlannedSection:
    """The section of ``parts`` as the checks read it (:func:`find_conflicts` takes these)."""
    row = parts.row
    return PlannedSection(
        id=row.id,
        crn=row.crn,
        term_id=row.term_id,
        course_id=row.course_id,
        schedule_type=row.schedule_type,
        instructional_method=row.instructional_method,
        credits_min=row.credits_min,
        credits_max=row.credits_max,
        seats_available=row.seats_available,
        waitlist_capacity=row.waitlist_capacity,
        waitlist_available=row.waitlist_available,
        cancelled=row.cancelled,
        cross_listed_crns=list(row.cross_listed_crns or []),
        linked_crns=list(row.linked_crns or []),
        course=_CourseOf(
            code=f"{row.subject_code} {row.course_number}",
            credits_min=row.course_credits_min,
            credits_max=row.course_credits_max,
        ),
        meeting_times=parts.meetings,
    )


# The plan's sections of a term by CRN, with their meetings, instructors and attributes: one
# statement per engine, built once (the CRNs an expanding parameter). It was two, the ids by CRN
# then the sections by id: each statement is hops to SQLite's thread and SQLAlchemy's execution.
_plan_by_dialect: dict[str, Select[*tuple[Any, ...]]] = {}


async def _plan_parts(session: AsyncSession, term_id: int, crns: Sequence[str]) -> list[section_rows.SectionParts]:
    dialect = session.get_bind().dialect.name
    statement = _plan_by_dialect.get(dialect)
    if statement is None:
        statement = _plan_by_dialect[dialect] = section_rows.parts_select(dialect).where(
            Section.term_id == bindparam("term_id"), Section.crn.in_(bindparam("crns", expanding=True))
        )
    rows = (await session.execute(statement, {"term_id": term_id, "crns": list(crns)})).all()
    return section_rows.parts_of(rows)


# The order of a tree's outcomes, worst last: a group "and" is its worst item, "or" its best.
_RANK: dict[PrerequisiteStatus, int] = {"none": 0, "met": 1, "in_progress": 2, "unknown": 3, "not_on_record": 4}


def _tree_status(node: dict[str, Any], record: StudentRecord, missing: list[str]) -> PrerequisiteStatus:
    if node.get("items"):
        found = [_tree_status(item, record, missing) for item in node["items"]]
        pick = min if node.get("op") == "or" else max
        return pick(found, key=_RANK.__getitem__)
    course = node.get("course")
    if not course:
        return "unknown"  # a test score: no record here holds one
    if course in record.completed:
        return "met"
    if course in record.in_progress:
        return "in_progress"
    missing.append(course)
    return "not_on_record"


_NOTES: dict[PrerequisiteStatus, str] = {
    "met": "Every prerequisite is a course the student finished (a minimum grade: ask the student for it).",
    "in_progress": "Met once the student passes the courses they take now.",
    "not_on_record": (
        "A prerequisite is not in the student's record here; transfer, AP or test credit is not recorded, so ask "
        "the student before planning a 'Prerequisite or corequisite' override."
    ),
    "unknown": "Not known here: ask the student which prerequisites they have.",
    "none": "No prerequisites.",
}


async def prerequisite_checks(
    session: AsyncSession, sections: Sequence[Section], record: StudentRecord
) -> list[PrerequisiteCheck]:
    """Each planned course's prerequisites against the student's record, once per course."""
    course_ids = sorted({s.course_id for s in sections})
    if not course_ids:
        return []
    rows = await session.execute(
        select(
            Course.id, Course.subject_code, Course.course_number, Course.prerequisites, Course.details_synced_at
        ).where(Course.id.in_(course_ids))
    )
    checks: list[PrerequisiteCheck] = []
    for _id, subject, number, tree, synced in sorted(rows.all(), key=lambda r: (r[1], r[2])):
        missing: list[str] = []
        status: PrerequisiteStatus
        if tree is None:
            # No tree: none when the course details were read, else they were never loaded here.
            status = "none" if synced is not None else "unknown"
            note = _NOTES[status] if synced is not None else "The course's prerequisites are not loaded here."
        else:
            status = _tree_status(tree, record, missing) if record.terms_on_record else "unknown"
            note = (
                _NOTES[status]
                if record.terms_on_record
                else "The student's past courses are not on record here: ask which prerequisites they have."
            )
        checks.append(
            PrerequisiteCheck(
                course_code=f"{subject} {number}", status=status, not_on_record=sorted(set(missing)), note=note
            )
        )
    return checks


async def check_schedule(
    session: AsyncSession,
    query: ScheduleCheckQuery,
    settings: Settings,
    catalog: CatalogSettings,
    record: StudentRecord | None = None,
) -> ScheduleCheck:
    """``record``: the signed-in student's (student_record.py), so their own sections need no
    override and the prerequisites are checked against their history; None for anyone else."""
    term = await known_term(session, query.term, settings)
    parts = sorted(await _plan_parts(session, term.id, query.crns), key=lambda p: query.crns.index(p.row.crn))
    # The checks read a section's attributes only; the rows carry them under the model's names.
    found = cast(list[Section], [planned_section(p) for p in parts])
    active = [s for s in found if not s.cancelled]
    conflicts = find_conflicts(active)
    needs = [
        OverrideNeed(
            override=TIME_CONFLICT,
            crns=[c.first.crn, c.second.crn],
            reason=(
                f"{c.first.course_code} (CRN {c.first.crn}) and {c.second.course_code} (CRN {c.second.crn}) "
                f"overlap {c.overlap_minutes} minutes on {c.days} ({c.overlap_12h})."
            ),
        )
        for c in conflicts
    ]
    return ScheduleCheck(
        term=term_ref(term),
        sections=[section_rows.answer_of(p) for p in parts],
        unknown_crns=[c for c in query.crns if c not in {s.crn for s in found}],
        cancelled_crns=[s.crn for s in found if s.cancelled],
        conflicts=conflicts,
        lab_pairs=await lab_pairs(session, active),
        duplicates=duplicates(active),
        overrides_needed=needs + _seat_needs(active, record.held_crns if record else frozenset()),
        totals=totals(active),
        ask_for_overrides=(
            f"Overrides come from {campus_rules(settings, catalog).overrides_from}. An override is not certain: "
            "prefer a plan that needs none."
        ),
        held_crns=None if record is None else [s.crn for s in found if s.crn in record.held_crns],
        prerequisites=None if record is None else await prerequisite_checks(session, active, record),
    )
