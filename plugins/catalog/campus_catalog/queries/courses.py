"""Courses (not sections): search by code, words or meaning, and one course with everything a
plan needs: prerequisites with minimum grades, what it unlocks, when it is offered."""

from __future__ import annotations

import json
import re
from typing import Any

from campus_mcp import NotFound, Settings
from pydantic import ValidationError
from sqlalchemy import String, and_, cast, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section, Subject
from campus_catalog.queries import fulltext
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.serialize import page_fields
from campus_catalog.queries.subjects import resolve_subject
from campus_catalog.queries.terms import all_terms, current_and_future, term_ref
from campus_catalog.schemas import (
    CourseBrief,
    CourseDetail,
    CourseLink,
    CourseLookup,
    CoursePage,
    CourseSearch,
    Fee,
    Requirement,
    Restriction,
    TermOffering,
)

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
        description=description,
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
    if query.q and query.semantic:
        depth = min(query.offset + query.limit, SEMANTIC_DEPTH)
        matches = await semantic.semantic_search(session, "courses", query.q, filters=where, limit=depth)
        ids = [m.id for m in matches]
        total = min(
            await session.scalar(select(func.count()).where(Course.embedding.is_not(None), *where)) or 0,
            SEMANTIC_DEPTH,
        )
        ids = ids[query.offset : query.offset + query.limit]
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
        ranked = await fulltext.matching_ids(session, "courses", query.q)
        if where and ranked:
            allowed = set((await session.scalars(select(Course.id).where(Course.id.in_(ranked), *where))).all())
            ranked = [i for i in ranked if i in allowed]
        total = len(ranked)
        ids = ranked[query.offset : query.offset + query.limit]
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
    return CoursePage(courses=[course_brief(courses[i]) for i in ids if i in courses], **page_fields(query, total))


async def find_course(session: AsyncSession, code: str) -> Course:
    subject, number = code.split(" ", 1)
    course = await session.scalar(select(Course).where(Course.subject_code == subject, Course.course_number == number))
    if course is None:
        raise NotFound(
            f"No course {code} is in the catalog. Check the code, or find it with search_courses by title words.",
            field="code",
        )
    return course


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
    code first (cheap on both backends), then each candidate's tree is read to be sure."""
    needle = f"%{json.dumps(code)}%"
    candidates = (
        await session.scalars(
            select(Course).where(Course.prerequisites.is_not(None), cast(Course.prerequisites, String).like(needle))
        )
    ).all()
    return [
        CourseLink(code=c.code, title=c.title)
        for c in sorted(candidates, key=lambda c: (c.subject_code, c.course_number))
        if code in _codes_in(c.prerequisites)
    ]


async def get_course(
    session: AsyncSession, query: CourseLookup, settings: Settings, catalog: CatalogSettings
) -> CourseDetail:
    course = await find_course(session, query.code)
    school = await session.scalar(select(Subject.school).where(Subject.code == course.subject_code))
    titles = await _titles(session, _codes_in(course.prerequisites))
    terms = current_and_future(await all_terms(session), campus_today(settings.timezone))
    counts = {
        term_id: count
        for term_id, count in (
            await session.execute(
                select(Section.term_id, func.count())
                .where(
                    Section.course_id == course.id,
                    Section.cancelled.is_(False),
                    Section.term_id.in_([t.id for t in terms]),
                )
                .group_by(Section.term_id)
            )
        )
    }
    return CourseDetail(
        code=course.code,
        subject_code=course.subject_code,
        course_number=course.course_number,
        title=course.title,
        description=course.description,
        credits_min=course.credits_min,
        credits_max=course.credits_max,
        school=school,
        prerequisites=_requirement(course.prerequisites, titles),
        corequisites=list(course.corequisites or []),
        restrictions=[Restriction.model_validate(r) for r in course.restrictions or [] if isinstance(r, dict)],
        mutual_exclusions=list(course.mutual_exclusions or []),
        catalog_entry=course.catalog_entry,
        fees=[Fee.model_validate(f) for f in course.fees or [] if isinstance(f, dict)],
        learning_objectives=list(course.learning_objectives or []),
        terms_offered=list(course.terms_offered or []),
        unlocks=await unlocks(session, course.code),
        offered_in=[
            TermOffering(term=term_ref(t), section_count=counts[t.id])
            for t in sorted(terms, key=lambda t: t.start_date)
            if counts.get(t.id)
        ],
        details_synced_at=course.details_synced_at,
    )


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
