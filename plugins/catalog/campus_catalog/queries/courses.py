"""Courses (not sections): search by code, words or meaning, and one course with everything a
plan needs: prerequisites with minimum grades, what it unlocks, when it is offered."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from campus_mcp import NotFound, Settings
from pydantic import ValidationError
from sqlalchemy import ColumnElement, Row, Select, String, and_, bindparam, cast, func, or_, select, tuple_
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from campus_catalog import semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section, Subject, Term
from campus_catalog.queries import fulltext, meaning_notes
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.section_rows import json_list
from campus_catalog.queries.serialize import page_fields
from campus_catalog.queries.subjects import resolve_subject
from campus_catalog.schemas import (
    NOT_LOADED,
    CourseBrief,
    CourseDetail,
    CourseLink,
    CourseLookup,
    CoursePage,
    CourseSearch,
    Fee,
    NotLoaded,
    Requirement,
    Restriction,
    TermOffering,
    TermRef,
)

T = TypeVar("T")
DESCRIPTION_PREVIEW = 300
# The start of a course code: "COMP 2350", "comp2", "MATH-17".
CODE_START = re.compile(r"^\s*([A-Za-z]{2,6})[\s\-_]*(\d{1,5}[A-Za-z]{0,2})\s*$")
SEMANTIC_DEPTH = 200


def course_brief(course: Course) -> CourseBrief:
    description = course.description
    if description and len(description) > DESCRIPTION_PREVIEW:
        description = description[:DESCRIPTION_PREVIEW].rsplit(" ", 1)[0] + " …"
    return CourseBrief(
        code=course.code,
        title=course.title,
        credits_min=course.credits_min,
        credits_max=course.credits_max,
        description=_known(description, course.details_synced_at is not None),
        terms_offered=list(course.terms_offered or []),
    )


async def search_courses(
    session: AsyncSession, query: CourseSearch, settings: Settings, catalog: CatalogSettings
) -> CoursePage:
    where: list[Any] = []
    if query.subject:
        where.append(Course.subject_code == await resolve_subject(session, query.subject))
    order = (Course.subject_code, Course.course_number)
    ids: list[int]
    code = CODE_START.match(query.q or "")
    subject_only = (query.q or "").strip().upper()
    note: str | None = None
    if query.q and query.semantic:
        depth = min(query.offset + query.limit, SEMANTIC_DEPTH)
        # The courses that reach the question's floor, listed and counted (semantic.question_floor).
        found = await semantic.courses_by_meaning(session, query.q, filters=where, limit=depth)
        total = min(found.total, SEMANTIC_DEPTH)
        ids = [m.id for m in found.matches][query.offset : query.offset + query.limit]
        note = meaning_notes.of_meaning(query.q, found.closeness, "courses")
        if not found.total:
            # Nothing near by meaning: the courses whose titles have the words instead, saying so.
            ids, total = await _by_title_words(session, query, where)
            note = meaning_notes.by_title_words(query.q, "courses", total)
    elif query.q and (code or await session.scalar(select(Subject.id).where(Subject.code == subject_only))):
        # A code ("COMP 2350", "comp2" as a start) or a bare subject code ("MATH").
        if code:
            where += [
                Course.subject_code == code.group(1).upper(),
                Course.course_number.startswith(code.group(2).upper()),
            ]
        else:
            where.append(Course.subject_code == subject_only)
        total = await session.scalar(select(func.count()).select_from(Course).where(*where)) or 0
        ids = list(
            (
                await session.scalars(
                    select(Course.id).where(*where).order_by(*order).offset(query.offset).limit(query.limit)
                )
            ).all()
        )
    elif query.q:
        ids, total = await _by_title_words(session, query, where)
    else:
        total = await session.scalar(select(func.count()).select_from(Course).where(*where)) or 0
        ids = list(
            (
                await session.scalars(
                    select(Course.id).where(*where).order_by(*order).offset(query.offset).limit(query.limit)
                )
            ).all()
        )
    courses = {c.id: c for c in (await session.scalars(select(Course).where(Course.id.in_(ids)))).all()}
    return CoursePage(
        courses=[course_brief(courses[i]) for i in ids if i in courses], note=note, **page_fields(query, total)
    )


async def _by_title_words(session: AsyncSession, query: CourseSearch, where: list[Any]) -> tuple[list[int], int]:
    """The page of courses whose title or description has the words (best first), and how many."""
    ranked = await fulltext.matching_ids(session, "courses", query.q or "")
    if where and ranked:
        allowed = set((await session.scalars(select(Course.id).where(Course.id.in_(ranked), *where))).all())
        ranked = [i for i in ranked if i in allowed]
    return ranked[query.offset : query.offset + query.limit], len(ranked)


def _requirement(tree: dict[str, Any] | None, titles: dict[str, str]) -> Requirement | None:
    if not tree:
        return None

    def walk(node: dict[str, Any]) -> dict[str, Any]:
        out = dict(node)
        if isinstance(node.get("items"), list):
            out["items"] = [walk(item) for item in node["items"] if isinstance(item, dict)]
        if isinstance(node.get("course"), str) and node["course"] in titles:
            out.setdefault("title", titles[node["course"]])
        return out

    try:
        return Requirement.model_validate(walk(tree))
    except ValidationError:
        # An importer wrote a shape this version does not know; show nothing rather than fail the course.
        return None


def _codes_in(tree: Any) -> set[str]:
    if isinstance(tree, dict):
        found = {tree["course"]} if isinstance(tree.get("course"), str) else set()
        for item in tree.get("items") or []:
            found |= _codes_in(item)
        return found
    return set()


async def _titles(session: AsyncSession, codes: set[str]) -> dict[str, str]:
    """The titles of the courses a prerequisite tree names, in one query (not one per course)."""
    if not codes:
        return {}
    code_of: dict[tuple[str, str], str] = {}
    for code in codes:
        subject, _, number = code.partition(" ")
        code_of[(subject, number)] = code
    rows = await session.execute(
        select(Course.subject_code, Course.course_number, Course.title).where(
            or_(*(and_(Course.subject_code == subject, Course.course_number == number) for subject, number in code_of))
        )
    )
    return {code_of[(subject, number)]: title for subject, number, title in rows if title}


async def unlocks(session: AsyncSession, code: str) -> list[CourseLink]:
    """Courses whose prerequisite tree names ``code``. The JSON text is searched for the quoted
    code first (cheap on both backends), then each candidate's tree is read to be sure. Only the
    four columns used are read: a whole course row carries its 1.5 KB vector."""
    needle = f"%{json.dumps(code)}%"
    candidates = (
        await session.execute(
            select(Course.subject_code, Course.course_number, Course.title, Course.prerequisites)
            .where(Course.prerequisites.is_not(None), cast(Course.prerequisites, String).like(needle))
            .order_by(Course.subject_code, Course.course_number)
        )
    ).all()
    return [
        CourseLink(code=f"{c.subject_code} {c.course_number}", title=c.title)
        for c in candidates
        if code in _codes_in(c.prerequisites)
    ]


# What a course answer shows, and its school (whose dean's office gives overrides), in one row.
_DETAIL_COLUMNS = (
    Course.id,
    Course.subject_code,
    Course.course_number,
    Course.title,
    Course.description,
    Course.credits_min,
    Course.credits_max,
    Course.prerequisites,
    Course.corequisites,
    Course.restrictions,
    Course.mutual_exclusions,
    Course.catalog_entry,
    Course.fees,
    Course.learning_objectives,
    Course.terms_offered,
    Course.details_synced_at,
    Subject.school,
)

# The course's fields no source may have loaded (issue 37, point 1), in the words of the answer.
_DETAIL_WORDS = {
    "description": "description",
    "prerequisites": "prerequisites",
    "corequisites": "corequisites",
    "restrictions": "restrictions",
    "mutual_exclusions": "mutual exclusions",
    "catalog_entry": "catalog entry",
    "fees": "fees",
    "learning_objectives": "learning objectives",
}


def _known(value: T, loaded: bool) -> T | NotLoaded:
    """``value`` when its source loaded it (null or []: none), else the words "not loaded here". A
    value that is there was loaded by something (a saved detail page imported from a file sets no
    read time), so it is said as it is."""
    if loaded or (value is not None and value != []):
        return value
    return NOT_LOADED


def _not_loaded_note(code: str, fields: list[str]) -> str | None:
    """What the answer does not know, said once, with where the student can ask."""
    if not fields:
        return None
    subject = code.split(" ", 1)[0]
    listed = ", ".join(_DETAIL_WORDS[f] for f in fields)
    return (
        f"Not loaded on this campus for {code}: its {listed}. This is not known here; do not say {code} has none. "
        f"Ask the {subject} department or an academic advisor, or look {code} up in the campus's course catalog."
    )


def _offered(dialect: str) -> ColumnElement[Any]:
    """The terms not over yet (``terms.current_and_future``, the parameter ``today``) in which the
    course has sections, with how many, as a JSON array of (id, uid, name, start date, count):
    the few terms each count their sections of the course from the term listing index."""
    count = (
        select(func.count())
        .select_from(Section)
        .where(Section.term_id == Term.id, Section.course_id == Course.id, Section.cancelled.is_(False))
        .correlate_except(Section)
        .scalar_subquery()
    )
    has = (
        select(Section.id)
        .where(Section.term_id == Term.id, Section.course_id == Course.id, Section.cancelled.is_(False))
        .correlate_except(Section)
        .exists()
    )
    rows = json_list(dialect, Term.id, Term.uid, Term.name, Term.start_date, count)
    return (
        select(rows)
        .where(Term.end_date >= bindparam("today"), has)
        .correlate_except(Term)
        .scalar_subquery()
        .label("offered_json")
    )


_UNLOCKED = aliased(Course, name="unlocked")


def _unlocks(dialect: str) -> ColumnElement[Any]:
    """:func:`unlocks`' candidates (the parameter ``needle``), in the catalog order, as a JSON
    array of (subject, number, title, prerequisites)."""
    where = (_UNLOCKED.prerequisites.is_not(None), cast(_UNLOCKED.prerequisites, String).like(bindparam("needle")))
    order = (_UNLOCKED.subject_code, _UNLOCKED.course_number)
    if dialect == "postgresql":
        row = func.json_build_array(
            _UNLOCKED.subject_code, _UNLOCKED.course_number, _UNLOCKED.title, _UNLOCKED.prerequisites
        )
        return (
            select(func.json_agg(aggregate_order_by(row, *order))).where(*where).scalar_subquery().label("unlocks_json")
        )
    # SQLite (3.40 has no ORDER BY in an aggregate) aggregates the rows of its ordered subquery in
    # order; json() makes the tree JSON in the array, not a string (a subquery's column is text).
    candidates = (
        select(_UNLOCKED.subject_code, _UNLOCKED.course_number, _UNLOCKED.title, _UNLOCKED.prerequisites)
        .where(*where)
        .order_by(*order)
        .subquery()
    )
    c = candidates.c
    tree = func.json(c.prerequisites)
    return (
        select(json_list(dialect, c.subject_code, c.course_number, c.title, tree))
        .scalar_subquery()
        .label("unlocks_json")
    )


# get_course's statement per dialect, built once: the course with its school, the terms it is
# offered in and the courses it unlocks, in one row (three statements were as many hops to
# SQLite's thread and passes through SQLAlchemy: most of get_course's time).
_details: dict[str, Select[*tuple[Any, ...]]] = {}


def _detail_select(dialect: str) -> Select[*tuple[Any, ...]]:
    statement = _details.get(dialect)
    if statement is None:
        statement = _details[dialect] = (
            select(*_DETAIL_COLUMNS, _offered(dialect), _unlocks(dialect))
            .outerjoin(Subject, Subject.code == Course.subject_code)
            .where(Course.subject_code == bindparam("subject"), Course.course_number == bindparam("number"))
        )
    return statement


def _json_value(value: Any) -> Any:
    """A JSON aggregate's value decoded: the drivers give text; PostgreSQL's of no rows is NULL."""
    if value is None:
        return []
    return json.loads(value) if isinstance(value, str | bytes) else value


def course_not_found(code: str) -> NotFound:
    return NotFound(
        f"No course {code} is in the catalog. Check the code, or find it with search_courses by title words.",
        field="code",
    )


async def get_course(
    session: AsyncSession, query: CourseLookup, settings: Settings, catalog: CatalogSettings
) -> CourseDetail:
    # Narrow Core selects, no Course object: the course with its school, the terms it
    # is offered in and the courses it unlocks in one row; its prerequisites' titles after it.
    subject, number = query.code.split(" ", 1)
    course = (
        await session.execute(
            _detail_select(session.get_bind().dialect.name),
            {
                "subject": subject,
                "number": number,
                "today": campus_today(settings.timezone),
                "needle": f"%{json.dumps(query.code)}%",
            },
        )
    ).first()
    if course is None:
        raise course_not_found(query.code)
    titles = await _titles(session, _codes_in(course.prerequisites))
    return _detail(course, titles, _json_value(course.unlocks_json))


def _detail(course: Row[*tuple[Any, ...]], titles: dict[str, str], candidates: Sequence[Sequence[Any]]) -> CourseDetail:
    """A course's answer from its row of :func:`_detail_select` (or of :func:`get_courses`), the
    titles of the courses its prerequisites name, and the candidates of :func:`unlocks`
    (subject, number, title, prerequisite tree), in the catalog order."""
    code = f"{course.subject_code} {course.course_number}"
    # JSON has no dates: the start date is ISO text on both engines, which sorts as the dates do.
    offered = sorted(_json_value(course.offered_json), key=lambda term: (str(term[3]), term[0]))
    # Banner's details (description, prerequisites) count as loaded once a run read the course:
    # then null is none. The other fields no Banner page gives: loaded when a source stored them.
    read = course.details_synced_at is not None
    loaded = {
        "description": read or course.description is not None,
        "prerequisites": read or course.prerequisites is not None,
        **{
            name: getattr(course, name) is not None
            for name in _DETAIL_WORDS
            if name not in ("description", "prerequisites")
        },
    }
    return CourseDetail(
        code=code,
        subject_code=course.subject_code,
        course_number=course.course_number,
        title=course.title,
        description=_known(course.description, loaded["description"]),
        credits_min=course.credits_min,
        credits_max=course.credits_max,
        school=course.school,
        prerequisites=_known(_requirement(course.prerequisites, titles), loaded["prerequisites"]),
        corequisites=_known(list(course.corequisites or []), loaded["corequisites"]),
        restrictions=_known(
            [Restriction.model_validate(r) for r in course.restrictions or [] if isinstance(r, dict)],
            loaded["restrictions"],
        ),
        mutual_exclusions=_known(list(course.mutual_exclusions or []), loaded["mutual_exclusions"]),
        catalog_entry=_known(course.catalog_entry, loaded["catalog_entry"]),
        fees=_known([Fee.model_validate(f) for f in course.fees or [] if isinstance(f, dict)], loaded["fees"]),
        learning_objectives=_known(list(course.learning_objectives or []), loaded["learning_objectives"]),
        terms_offered=list(course.terms_offered or []),
        unlocks=[
            CourseLink(code=f"{subject_code} {course_number}", title=title)
            for subject_code, course_number, title, tree in candidates
            if code in _codes_in(tree)
        ],
        offered_in=[
            TermOffering(term=TermRef(uid=uid, name=name), section_count=count)
            for _id, uid, name, _start, count in offered
        ],
        not_loaded=_not_loaded_note(code, [name for name, known in loaded.items() if not known]),
    )


# get_courses' statement per dialect: _detail_select's row without the unlocks, for many codes
# (one expanding parameter of (subject, number) pairs, so one compiled statement serves any count).
_many_details: dict[str, Select[*tuple[Any, ...]]] = {}


def _many_select(dialect: str) -> Select[*tuple[Any, ...]]:
    statement = _many_details.get(dialect)
    if statement is None:
        statement = _many_details[dialect] = (
            select(*_DETAIL_COLUMNS, _offered(dialect))
            .outerjoin(Subject, Subject.code == Course.subject_code)
            .where(tuple_(Course.subject_code, Course.course_number).in_(bindparam("codes", expanding=True)))
        )
    return statement


async def get_courses(
    session: AsyncSession, codes: Sequence[str], settings: Settings, catalog: CatalogSettings
) -> dict[str, CourseDetail]:
    """:func:`get_course` for many codes (normalized, as ``CourseLookup`` gives them) in three
    statements whatever their number: the rows, the courses that may be unlocked by them, the
    titles their prerequisites name. A code of no course is absent from the answer.

    For GraphQL's ``course`` link, asked for every section of a page: one get_course each was
    about 3,200 calls (and twice as many statements) for one query at the cost limit (issue 30)."""
    wanted = list(dict.fromkeys(codes))
    if not wanted:
        return {}
    pairs = [tuple(code.split(" ", 1)) for code in wanted]
    rows = (
        await session.execute(
            _many_select(session.get_bind().dialect.name),
            {"codes": pairs, "today": campus_today(settings.timezone)},
        )
    ).all()
    if not rows:
        return {}
    found = [f"{row.subject_code} {row.course_number}" for row in rows]
    # unlocks()' candidates for every course at once: any of their quoted codes in the JSON text.
    candidates = (
        await session.execute(
            select(Course.subject_code, Course.course_number, Course.title, Course.prerequisites)
            .where(
                Course.prerequisites.is_not(None),
                or_(*(cast(Course.prerequisites, String).like(f"%{json.dumps(code)}%") for code in found)),
            )
            .order_by(Course.subject_code, Course.course_number)
        )
    ).all()
    unlocked_by: dict[str, list[Sequence[Any]]] = {}
    for candidate in candidates:
        for named in _codes_in(candidate.prerequisites):
            unlocked_by.setdefault(named, []).append(candidate)
    titles = await _titles(session, set().union(*(_codes_in(row.prerequisites) for row in rows)))
    return {code: _detail(row, titles, unlocked_by.get(code, [])) for code, row in zip(found, rows, strict=True)}


async def course_codes_starting_with(session: AsyncSession, prefix: str) -> list[str]:
    """Course codes that start with ``prefix`` (ignoring case and the space): the ``courses``
    completion. Uses the unique (subject_code, course_number) index when a number is given."""
    cleaned = "".join(prefix.split()).upper()
    match = re.match(r"([A-Z]*)(.*)", cleaned)
    letters, number = (match.group(1), match.group(2)) if match else (cleaned, "")
    statement = select(Course.subject_code, Course.course_number)
    if number:
        statement = statement.where(Course.subject_code == letters, Course.course_number.startswith(number))
    else:
        statement = statement.where(Course.subject_code.startswith(letters))
    rows = await session.execute(statement.order_by(Course.subject_code, Course.course_number).limit(101))
    return [f"{s} {n}" for s, n in rows]
