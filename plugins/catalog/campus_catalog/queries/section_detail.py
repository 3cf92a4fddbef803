"""One section's whole answer (``get_section``) in one statement.

The answer was five statements: the section's id by CRN, its row with its meetings, instructors
and attributes, the briefs of its cross-listed and linked sections, the term's newest finals
schedule, and the exams of that schedule. Each statement is several hops to SQLite's thread and
a pass through SQLAlchemy's execution; under load those, not the reads (each quick from its
index), made get_section cost about twice a page of search_sections.
Here the section is picked by its CRN (and term) in the statement of its answer
(``section_rows.parts_select``), and the briefs and the exam are two more correlated columns of
the same row, each answered from an index: the (term, CRN) key of sections, and the (term, CRN)
and (term, course code) indexes of exams.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import ColumnElement, Select, String, bindparam, func, select, union_all
from sqlalchemy.orm import aliased

from campus_catalog.models import Course, FinalExam, FinalsSchedule, Section, Term
from campus_catalog.queries import section_rows
from campus_catalog.queries.clock import hhmm
from campus_catalog.schemas import FinalExamOut, SectionBrief

_LISTED = aliased(Section, name="listed")
_LISTED_COURSE = aliased(Course, name="listed_course")


def _listed_crns(dialect: str, column: Any) -> Any:
    """The CRNs of one of the section's JSON lists (cross-listed, linked), as rows of ``value``."""
    each = "json_array_elements_text" if dialect == "postgresql" else "json_each"
    return select(getattr(func, each)(column).table_valued("value").c.value)


def _briefs(dialect: str) -> ColumnElement[Any]:
    """The briefs of the section's cross-listed and linked sections of its term, not itself, as a
    JSON array of ``section_rows.BRIEF_COLUMNS`` rows (a ``SectionBrief``'s fields)."""
    crns = union_all(_listed_crns(dialect, Section.cross_listed_crns), _listed_crns(dialect, Section.linked_crns))
    return (
        select(
            section_rows.json_list(
                dialect,
                _LISTED.crn,
                _LISTED.section_number,
                _LISTED.title,
                _LISTED.schedule_type,
                _LISTED.cancelled,
                _LISTED_COURSE.subject_code,
                _LISTED_COURSE.course_number,
                _LISTED_COURSE.title,
            )
        )
        .select_from(_LISTED)
        .join(_LISTED_COURSE, _LISTED_COURSE.id == _LISTED.course_id)
        .where(_LISTED.term_id == Section.term_id, _LISTED.crn.in_(crns), _LISTED.crn != Section.crn)
        .correlate(Section)
        .scalar_subquery()
        .label("briefs_json")
    )


def _exam(dialect: str, term_id: Any, crn: Any, course_code: Any) -> ColumnElement[Any]:
    """The final exam of the section of ``term_id``, ``crn`` and ``course_code`` (columns or
    parameters) from its term's newest completed finals schedule: the exam of its CRN, else its
    course's (a row with no CRN), as a JSON array (date, start, end, building, room); NULL when
    there is none. Exams are read by their (term, CRN) and (term, course code) indexes, each of a
    schedule's exams carrying its term (sources.finals.import_finals)."""
    newest = (
        select(FinalsSchedule.id)
        .where(FinalsSchedule.term_id == term_id, FinalsSchedule.status == "completed")
        .order_by(FinalsSchedule.loaded_at.desc(), FinalsSchedule.id.desc())
        .limit(1)
        # The section's columns are the outer statement's, two levels up (SQLAlchemy correlates
        # only to the enclosing select by itself, which has no sections).
        .correlate_except(FinalsSchedule)
        .scalar_subquery()
    )
    array = func.json_build_array if dialect == "postgresql" else func.json_array

    def first(*test: ColumnElement[bool]) -> Any:
        return (
            select(
                array(
                    FinalExam.exam_date,
                    FinalExam.start_minute,
                    FinalExam.end_minute,
                    FinalExam.building,
                    FinalExam.room,
                )
            )
            .where(FinalExam.term_id == term_id, FinalExam.schedule_id == newest, *test)
            .order_by(FinalExam.id)
            .limit(1)
            .correlate_except(FinalExam)
            .scalar_subquery()
        )

    return func.coalesce(
        first(FinalExam.crn == crn), first(FinalExam.crn.is_(None), FinalExam.course_code == course_code)
    ).label("exam_json")


# exam_select per dialect, built once.
_exams: dict[str, Select[tuple[Any]]] = {}


def exam_select(dialect: str) -> Select[tuple[Any]]:
    """:func:`_exam` of the parameters ``term_id``, ``crn`` and ``course_code``, alone."""
    statement = _exams.get(dialect)
    if statement is None:
        keys: tuple[Any, ...] = (
            bindparam("term_id"),
            bindparam("crn", type_=String),
            bindparam("course_code", type_=String),
        )
        statement = _exams[dialect] = select(_exam(dialect, *keys))
    return statement


def exam_column(dialect: str) -> ColumnElement[Any]:
    """The final exam of each section of a :func:`section_rows.parts_select` statement, as one
    more column (``exam_json``, read by :func:`exam_out`): a student's finals in the statement
    that reads their sections, not one statement per section."""
    return _exam(dialect, Section.term_id, Section.crn, Course.subject_code + " " + Course.course_number)


def _detail_select(dialect: str, in_term: bool) -> Select[*tuple[Any, ...]]:
    """The section by CRN: in the term ``term_id``, or (``in_term`` False) in the newest term
    that has the CRN; its answer's columns, then its briefs and its exam."""
    statement = section_rows.parts_select(dialect).add_columns(
        _briefs(dialect),
        exam_column(dialect),
        # When the seats were read (a file import leaves the section's time alone: its term's
        # import), and whether Banner's live sync reads the term (then the seat refresh does too).
        func.coalesce(Section.seats_synced_at, Term.catalog_imported_at).label("seats_read_at"),
        Term.sections_synced_at.label("term_synced_at"),
    )
    if in_term:
        return statement.where(Section.term_id == bindparam("term_id"), Section.crn == bindparam("crn"))
    return statement.where(Section.crn == bindparam("crn")).order_by(Term.start_date.desc()).limit(1)


# _detail_select per (dialect, in_term), built once.
_details: dict[tuple[str, bool], Select[*tuple[Any, ...]]] = {}


def detail_select(dialect: str, in_term: bool) -> Select[*tuple[Any, ...]]:
    key = (dialect, in_term)
    statement = _details.get(key)
    if statement is None:
        statement = _details[key] = _detail_select(dialect, in_term)
    return statement


def _text(value: Any) -> Any:
    """A JSON column's value decoded (the drivers give text; psycopg-style drivers decode it)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def briefs_of(value: Any) -> dict[str, SectionBrief]:
    """The briefs of ``briefs_json``, by CRN."""
    briefs = {}
    for crn, number, title, schedule_type, cancelled, subject, course_number, course_title in _text(value) or []:
        briefs[crn] = SectionBrief(
            crn=crn,
            course_code=f"{subject} {course_number}",
            title=title or course_title,
            section_number=number,
            schedule_type=schedule_type,
            cancelled=bool(cancelled),
        )
    return briefs


def exam_out(value: Any) -> FinalExamOut | None:
    """The exam of ``exam_json`` (``sections.exam_of``'s answer)."""
    found = _text(value)
    if not found:
        return None
    exam_date, start, end, building, room = found
    return FinalExamOut(date=exam_date, start=hhmm(start), end=hhmm(end), building=building, room=room)
