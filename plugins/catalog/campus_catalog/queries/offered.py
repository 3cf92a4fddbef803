"""The sections of many courses in one term at once: GraphQL's ``offered_sections`` link, asked
for every course of a page. One ``search_sections`` per course (three statements each) was most
of a query at the cost limit (issue 30); here a page of every course is one statement.

Each course's page is what ``search_sections`` with its subject and course number answers: the
same filters (``sections.section_filters``), the same order (``CATALOG_ORDER``), the same total.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from campus_mcp import CampusError, Settings
from sqlalchemy import Integer, Row, bindparam, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import Course, Section
from campus_catalog.queries import section_rows, statements
from campus_catalog.queries.sections import CATALOG_ORDER, kept_filters
from campus_catalog.queries.serialize import page_fields
from campus_catalog.queries.subjects import resolve_subject
from campus_catalog.queries.terms import known_term, term_ref
from campus_catalog.schemas import SectionPage, SectionSearch

# A course as search_sections matches it: its subject, and its number in any case.
_KEY = (Course.subject_code, func.upper(Course.course_number))


async def offered_pages(
    session: AsyncSession, codes: Sequence[str], query: SectionSearch, settings: Settings
) -> dict[str, SectionPage | CampusError]:
    """A page of each course's sections (``codes`` as "SUBJ 1234") for ``query``'s term, page and
    other filters, as ``search_sections`` answers it with ``subject`` and ``course_number`` added.
    A code whose subject is unknown gets search_sections' error instead of a page."""
    term = await known_term(session, query.term, settings)
    answers: dict[str, SectionPage | CampusError] = {}
    key_of: dict[tuple[str, str], list[str]] = {}
    for code in dict.fromkeys(codes):
        subject, number = code.split(" ", 1)
        try:
            subject = await resolve_subject(session, subject)
        except CampusError as problem:
            answers[code] = problem
            continue
        key_of.setdefault((subject, number.upper()), []).append(code)
    if not key_of:
        return answers
    dialect = session.get_bind().dialect.name
    where = kept_filters(query, term, None, dialect)
    ranked = (
        select(
            Section.id.label("id"),
            *(column.label(name) for column, name in zip(_KEY, ("subject", "number"), strict=True)),
            func.row_number().over(partition_by=_KEY, order_by=CATALOG_ORDER).label("position"),
            func.count().over(partition_by=_KEY).label("total"),
        )
        .join(Course, Course.id == Section.course_id)
        .where(*where, tuple_(*_KEY).in_(bindparam("courses", expanding=True)))
        .subquery("ranked")
    )
    page = (
        section_rows.summary_select(dialect, ranked.c.subject, ranked.c.number, ranked.c.total)
        .join(ranked, ranked.c.id == Section.id)
        .where(
            ranked.c.position > bindparam("first", type_=Integer),
            ranked.c.position <= bindparam("last", type_=Integer),
        )
        .order_by(ranked.c.subject, ranked.c.number, ranked.c.position)
    )
    rows = await statements.read_rows(
        session, page, {"courses": list(key_of), "first": query.offset, "last": query.offset + query.limit}
    )
    rows_of: dict[tuple[str, str], list[Row[*tuple[Any, ...]]]] = {}
    for row in rows:
        rows_of.setdefault((row[-3], row[-2]), []).append(row)
    for key, same in key_of.items():
        found = rows_of.get(key, [])
        total = found[0][-1] if found else await _total_past_the_end(session, where, key, query)
        answer = SectionPage(
            term=term_ref(term), sections=section_rows.summaries_of(found), **page_fields(query, total)
        )
        for code in same:
            answers[code] = answer
    return answers


async def _total_past_the_end(
    session: AsyncSession, where: list[Any], key: tuple[str, str], query: SectionSearch
) -> int:
    """The total of a course whose page is empty: 0 on the first page, else its count (an offset
    past the end), as search_sections counts it."""
    if not query.offset:
        return 0
    counted = (
        select(func.count())
        .select_from(Section)
        .join(Course, Course.id == Section.course_id)
        .where(*where, tuple_(*_KEY) == tuple_(*key))
    )
    return await session.scalar(counted) or 0
