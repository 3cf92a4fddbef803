"""Sections (``Catalog::SectionQuery`` of seed 000): search with every catalog filter, one
section by CRN, and sections close to one section."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from campus_mcp import NotFound, Settings
from sqlalchemy import ColumnElement, Integer, Select, and_, bindparam, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import (
    Campus,
    Course,
    FinalExam,
    FinalsSchedule,
    Instructor,
    PartOfTerm,
    Section,
    SectionAttribute,
    SectionInstructor,
    Term,
)
from campus_catalog.queries import fulltext, meeting_filters, section_rows, statements
from campus_catalog.queries.clock import hhmm
from campus_catalog.queries.lookups import KnownTerm
from campus_catalog.queries.serialize import load_sections, page_fields
from campus_catalog.queries.subjects import resolve_subject
from campus_catalog.queries.terms import known_term, term_ref
from campus_catalog.schemas import (
    FinalExamOut,
    SectionBrief,
    SectionDetail,
    SectionLookup,
    SectionPage,
    SectionSearch,
    SimilarSection,
    SimilarSections,
    SimilarSectionsQuery,
    TermRef,
)

# A search by meaning ranks at most this many sections; further pages of it end there.
SEMANTIC_DEPTH = 200
# The order sections are listed in (the words' ranking aside).
CATALOG_ORDER = (Course.subject_code, Course.course_number, Section.section_number, Section.crn)


def section_filters(query: SectionSearch, term: KnownTerm) -> list[ColumnElement[bool]]:
    """Every filter of a section search except the words and the meaning, as SQL conditions."""
    where: list[ColumnElement[bool]] = [Section.term_id == term.id]
    if not query.include_cancelled:
        where.append(Section.cancelled.is_(False))
    if query.subject:
        # The subject's courses, then their sections of the term from the (term, course) index:
        # a join test would read every section of the term (36,030 at --scale 67) for 2,521.
        where.append(Section.course_id.in_(select(Course.id).where(Course.subject_code == query.subject)))
    if query.course_number:
        where.append(func.upper(Course.course_number) == query.course_number.upper())
    if query.instructor:
        # The few matching instructors first, then their sections: not a name test per section.
        name = query.instructor.lower()
        teachers = select(Instructor.id).where(
            or_(func.lower(Instructor.name).contains(name, autoescape=True), Instructor.pub_id == query.instructor)
        )
        where.append(
            Section.id.in_(select(SectionInstructor.section_id).where(SectionInstructor.instructor_id.in_(teachers)))
        )
    # Days and times test the section's own meeting summary (its index entry), not its meetings.
    where += meeting_filters.meeting_conditions(query)
    if query.campus:
        wanted_campus = query.campus.lower()
        where.append(
            Section.campus_id.in_(
                select(Campus.id).where(
                    or_(func.lower(Campus.code) == wanted_campus, func.lower(Campus.name).contains(wanted_campus))
                )
            )
        )
    if query.part_of_term:
        where.append(
            Section.part_of_term_id.in_(
                select(PartOfTerm.id).where(PartOfTerm.term_id == term.id, PartOfTerm.code == query.part_of_term)
            )
        )
    if query.schedule_type:
        where.append(func.lower(Section.schedule_type).startswith(query.schedule_type.lower(), autoescape=True))
    if query.instructional_method:
        where.append(
            func.lower(Section.instructional_method).startswith(query.instructional_method.lower(), autoescape=True)
        )
    if query.open_only:
        where.append(Section.seats_available > 0)
    if query.credits is not None:
        low = func.coalesce(Section.credits_min, Course.credits_min)
        high = func.coalesce(Section.credits_max, Section.credits_min, Course.credits_max, Course.credits_min)
        where.append(and_(low <= query.credits, high >= query.credits))
    if query.attribute:
        where.append(
            exists().where(
                SectionAttribute.section_id == Section.id, func.upper(SectionAttribute.code) == query.attribute.upper()
            )
        )
    return where


def _base(where: list[ColumnElement[bool]]) -> Select[Any]:
    return select(Section.id).join(Course, Course.id == Section.course_id).where(*where)


def _uses_course(query: SectionSearch) -> bool:
    return bool(query.subject or query.course_number or query.credits is not None)


def _count(where: list[ColumnElement[bool]], query: SectionSearch) -> Select[Any]:
    """The count of a search. Without a course filter it needs no join, so SQLite answers it from
    the term listing index alone."""
    if _uses_course(query):
        return select(func.count()).select_from(_base(where).subquery())
    return select(func.count()).select_from(Section).where(*where)


def _page_of_matches(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[Any]:
    """A page of the sections matching ``where`` and their count, in one statement (see
    section_rows.summary_select); its offset and limit are the parameters ``page_offset`` and
    ``page_limit``. The matches are found once, into a materialized CTE, and both the count and
    the page read it: the meeting-time probes of a days-and-times search ran twice before."""
    matching = (
        _base(list(where))
        .add_columns(Course.subject_code, Course.course_number, Section.section_number, Section.crn)
        .cte("matching")
        .prefix_with("MATERIALIZED")
    )
    in_order = (matching.c.subject_code, matching.c.course_number, matching.c.section_number, matching.c.crn)
    page_ids = (
        select(matching.c.id)
        .order_by(*in_order)
        .offset(bindparam("page_offset", type_=Integer))
        .limit(bindparam("page_limit", type_=Integer))
    )
    total_of = select(func.count()).select_from(matching).scalar_subquery().label("total")
    return section_rows.summary_select(dialect, total_of).where(Section.id.in_(page_ids)).order_by(*CATALOG_ORDER)


_PAGES = statements.Shaped(_page_of_matches)


def _word_matches(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """The sections matching ``where`` (the filters and the words), in the catalog order."""
    return (
        select(Section.id, Section.course_id)
        .join(Course, Course.id == Section.course_id)
        .where(*where)
        .order_by(*CATALOG_ORDER)
    )


_WORD_MATCHES = statements.Shaped(_word_matches)


async def _count_past_the_end(session: AsyncSession, where: list[ColumnElement[bool]], query: SectionSearch) -> int:
    """The total of an empty page: 0 on the first page, else the count alone (an offset past the end)."""
    return (await session.scalar(_count(where, query)) or 0) if query.offset else 0


async def search_sections(
    session: AsyncSession, query: SectionSearch, settings: Settings, catalog: CatalogSettings
) -> SectionPage:
    term = await known_term(session, query.term, settings)
    if query.subject:
        query = query.model_copy(update={"subject": await resolve_subject(session, query.subject)})
    where = section_filters(query, term)

    if query.q and query.semantic:
        depth = min(query.offset + query.limit, SEMANTIC_DEPTH)
        # The total is what the ranking could rank (sections with their own or their course's
        # vector), counted from the rows it reads; ``Section.embedding IS NOT NULL`` was both
        # slow (a vector column per row) and wrong for sections that share their course's vector.
        matches, rankable = await semantic.sections_by_meaning(session, query.q, within=_base(where), limit=depth)
        ids = [m.id for m in matches][query.offset :]
        total = min(rankable, SEMANTIC_DEPTH)
    elif query.q:
        course_ids = await fulltext.matching_ids(session, "courses", query.q)
        rank = {course_id: position for position, course_id in enumerate(course_ids)}
        words = query.q.lower()
        matching, params = _WORD_MATCHES.statement(
            session.get_bind().dialect.name,
            [
                *where,
                or_(Section.course_id.in_(course_ids), func.lower(Section.title).contains(words, autoescape=True)),
            ],
        )
        rows = (await session.execute(matching, params)).all()
        # Best-matching course first; within a course, the catalog order.
        ranked = sorted(enumerate(rows), key=lambda item: (rank.get(item[1][1], len(rank)), item[0]))
        total = len(ranked)
        ids = [section_id for _, (section_id, _course) in ranked][query.offset : query.offset + query.limit]
    else:
        # The page and the count in one statement (see _page_of_matches), built once per shape.
        statement, params = _PAGES.statement(
            session.get_bind().dialect.name, where, page_offset=query.offset, page_limit=query.limit
        )
        page = (await session.execute(statement, params)).all()
        total = page[0].total if page else await _count_past_the_end(session, where, query)
        return SectionPage(
            term=term_ref(term),
            sections=[section_rows.summary_of(row) for row in page],
            **page_fields(query, total or 0),
        )
    return SectionPage(
        term=term_ref(term),
        sections=await section_rows.section_summaries(session, ids[: query.limit]),
        **page_fields(query, total or 0),
    )


async def section_key(session: AsyncSession, crn: str, term: str | None, settings: Settings) -> tuple[int, int]:
    """The id and term id of a section by CRN; without a term, the newest term that has the CRN."""
    if term is not None:
        chosen = await known_term(session, term, settings)
        section_id = await session.scalar(select(Section.id).where(Section.term_id == chosen.id, Section.crn == crn))
        term_id = chosen.id
        if section_id is None:
            raise NotFound(
                f"No section has CRN {crn} in {chosen.name} ({chosen.uid}). Check the CRN, or find it with "
                "search_sections in that term.",
                field="crn",
            )
    else:
        found = (
            await session.execute(
                select(Section.id, Section.term_id)
                .join(Term, Term.id == Section.term_id)
                .where(Section.crn == crn)
                .order_by(Term.start_date.desc())
                .limit(1)
            )
        ).first()
        section_id, term_id = found if found is not None else (None, 0)
        if section_id is None:
            raise NotFound(
                f"No section has CRN {crn} in any term. Check the CRN, or find the section with search_sections.",
                field="crn",
            )
    return section_id, term_id


async def find_section(session: AsyncSession, crn: str, term: str | None, settings: Settings) -> Section:
    """The section (loaded with what an answer shows) by CRN; without a term, the newest term that has it."""
    section_id, _term_id = await section_key(session, crn, term, settings)
    return (await load_sections(session, [section_id]))[0]


async def final_exam(session: AsyncSession, section: Section) -> FinalExamOut | None:
    """The exam of the section by CRN, else of its course, from the term's newest completed schedule."""
    return await exam_of(session, section.term_id, section.crn, section.course.code)


async def exam_of(session: AsyncSession, term_id: int, crn: str, course_code: str) -> FinalExamOut | None:
    """``final_exam`` from the section's keys (the Core read path has no Section object)."""
    schedule_id = await session.scalar(
        select(FinalsSchedule.id)
        .where(FinalsSchedule.term_id == term_id, FinalsSchedule.status == "completed")
        .order_by(FinalsSchedule.loaded_at.desc(), FinalsSchedule.id.desc())
        .limit(1)
    )
    if schedule_id is None:
        return None
    exams = (
        await session.scalars(
            select(FinalExam).where(
                FinalExam.schedule_id == schedule_id,
                or_(
                    FinalExam.crn == crn,
                    and_(FinalExam.crn.is_(None), FinalExam.course_code == course_code),
                ),
            )
        )
    ).all()
    if not exams:
        return None
    exam = sorted(exams, key=lambda e: e.crn is None)[0]
    return FinalExamOut(
        date=exam.exam_date,
        start=hhmm(exam.start_minute),
        end=hhmm(exam.end_minute),
        building=exam.building,
        room=exam.room,
    )


async def get_section(
    session: AsyncSession, query: SectionLookup, settings: Settings, catalog: CatalogSettings
) -> SectionDetail:
    section_id, term_id = await section_key(session, query.crn, query.term, settings)
    (base,) = await section_rows.section_answers(session, [section_id])
    # The cross-listed and linked sections of the same term, in one read for both lists.
    others = [c for c in dict.fromkeys([*base.cross_listed_crns, *base.linked_crns]) if c != base.crn]
    briefs = {brief.crn: brief for brief in await section_rows.section_briefs(session, term_id, others)}
    exam = await exam_of(session, term_id, base.crn, base.course_code)
    return SectionDetail(
        **dict(base),
        cross_listed=[briefs[c] for c in base.cross_listed_crns if c in briefs],
        linked=[briefs[c] for c in base.linked_crns if c in briefs],
        final_exam=exam,
    )


async def similar_sections(
    session: AsyncSession, query: SimilarSectionsQuery, settings: Settings, catalog: CatalogSettings
) -> SimilarSections:
    """Sections of other courses in the same term that teach something close: by meaning when the
    section has a vector, else by the words of its course title."""
    section_id, term_id = await section_key(session, query.crn, query.term, settings)
    # The section itself in one narrow row: its course, its term and the fields of its brief.
    section = (
        await session.execute(
            select(
                Section.id,
                Section.course_id,
                *section_rows.BRIEF_COLUMNS,
                Term.uid.label("term_uid"),
                Term.name.label("term_name"),
            )
            .join(Course, Course.id == Section.course_id)
            .join(Term, Term.id == Section.term_id)
            .where(Section.id == section_id)
        )
    ).one()
    others: list[ColumnElement[bool]] = [
        Section.term_id == term_id,
        Section.cancelled.is_(False),
        Section.course_id != section.course_id,
    ]
    vector = await semantic.stored_vector(session, "sections", section.id)
    scored: list[tuple[int, float]] = []
    if vector is not None:
        method = "meaning"
        # One section per course, the closest courses first, however many sections each has.
        matches = await semantic.one_section_per_course(session, vector, where=others, limit=query.limit)
        scored = [(match.id, match.score) for match in matches]
    else:
        method = "words"
        course_ids = await fulltext.matching_ids(session, "courses", section.course_title)
        course_ids = [c for c in course_ids if c != section.course_id][: query.limit]
        # The first section of each course, from one query for all of them (not one per course).
        first: dict[int, int] = {}
        for section_id, course_id in await session.execute(
            select(Section.id, Section.course_id)
            .join(Course, Course.id == Section.course_id)
            .where(*others, Section.course_id.in_(course_ids))
            .order_by(Section.section_number)
        ):
            first.setdefault(course_id, section_id)
        for position, course_id in enumerate(course_ids):
            if course_id in first:
                scored.append((first[course_id], round(1.0 / (position + 1), 4)))
    scored = scored[: query.limit]
    summaries = await section_rows.summaries_by_id(session, [i for i, _ in scored])
    return SimilarSections(
        term=TermRef(uid=section.term_uid, name=section.term_name),
        section=SectionBrief(
            crn=section.crn,
            course_code=f"{section.subject_code} {section.course_number}",
            title=section.title or section.course_title,
            section_number=section.section_number,
            schedule_type=section.schedule_type,
            cancelled=section.cancelled,
        ),
        method=method,
        sections=[SimilarSection(**summaries[i].model_dump(), score=score) for i, score in scored if i in summaries],
    )
