"""Sections (``Catalog::SectionQuery`` of seed 000): search with every catalog filter, one
section by CRN, and sections close to one section."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from campus_mcp import NotFound, Settings, ShapedStatements
from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    Select,
    and_,
    bindparam,
    exists,
    func,
    or_,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.freshness import seats_as_of
from campus_catalog.models import (
    Campus,
    Course,
    PartOfTerm,
    Section,
    SectionAttribute,
    Term,
)
from campus_catalog.queries import (
    fulltext,
    instructor_filter,
    meaning_notes,
    meeting_filters,
    section_detail,
    section_rows,
    statements,
)
from campus_catalog.queries.attributes import resolve_attribute
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.lookups import KnownTerm
from campus_catalog.queries.serialize import page_fields
from campus_catalog.queries.subjects import resolve_subject
from campus_catalog.queries.terms import known_term, term_ref
from campus_catalog.schemas import (
    FinalExamOut,
    SectionBrief,
    SectionDetail,
    SectionLookup,
    SectionPage,
    SectionSearch,
    SectionSummary,
    SimilarSection,
    SimilarSections,
    SimilarSectionsQuery,
    TermRef,
)

# A search by meaning ranks at most this many sections; further pages of it end there.
SEMANTIC_DEPTH = 200
# The order sections are listed in (the words' ranking aside), shared with instructor_filter.
CATALOG_ORDER = section_rows.CATALOG_ORDER


def section_filters(
    query: SectionSearch, term: KnownTerm, teachers: list[int] | None = None, dialect: str = "sqlite"
) -> list[ColumnElement[bool]]:
    """Every filter of a section search except the words and the meaning, as SQL conditions.
    ``teachers`` are the instructors of the ``instructor`` filter when they are few (few_teachers);
    ``dialect`` the engine's name (an instructor test is written for each engine's planner)."""
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
        where.append(instructor_filter.taught_by(query.instructor, teachers, dialect))
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


# section_filters built once per distinct question (statements.KeptConditions).
kept_filters = statements.KeptConditions(section_filters)


def _base(where: list[ColumnElement[bool]]) -> Select[Any]:
    return select(Section.id).join(Course, Course.id == Section.course_id).where(*where)


def _count(where: Sequence[ColumnElement[bool]]) -> Select[Any]:
    """The count of a search. When no condition reads a course column (a subject is a list of
    course ids) it needs no join, so it is read from the term listing index alone."""
    if _reads_courses(where):
        return select(func.count()).select_from(_base(list(where)).subquery())
    return select(func.count()).select_from(Section).where(*where)


def _page_of_matches(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[Any]:
    """A page of the sections matching ``where`` and their count, in one statement (see
    section_rows.summary_select); its offset and limit are the parameters ``page_offset`` and
    ``page_limit``. The count and the page are two index reads: the page walks courses in the
    catalog order and stops after it (with SQLite's statistics, see demo.generate._analyze), no
    sort of every match. A materialized CTE of every match, read by both, made a browse of the
    36,030-section term of --scale 67 read and sort all of them to show 25."""
    page_ids = (
        _base(list(where))
        .order_by(*CATALOG_ORDER)
        .offset(bindparam("page_offset", type_=Integer))
        .limit(bindparam("page_limit", type_=Integer))
    )
    total_of = _count(where).scalar_subquery().label("total")
    return section_rows.summary_select(dialect, total_of).where(Section.id.in_(page_ids)).order_by(*CATALOG_ORDER)


# Each kind of statement kept per shape of its conditions (campus_mcp.ShapedStatements, a speed-up
# with a switch; off, each is built per call).
_PAGES = ShapedStatements(_page_of_matches)


def _word_matches(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """The sections matching ``where`` (the filters and the words), in the catalog order, with it."""
    return (
        select(Section.id, Section.course_id, *CATALOG_ORDER)
        .join(Course, Course.id == Section.course_id)
        .where(*where)
        .order_by(*CATALOG_ORDER)
    )


def _reads_courses(where: Sequence[ColumnElement[bool]]) -> bool:
    """Whether a condition reads a course column itself (a subquery of courses, as the subject's
    course ids, does not: it needs no join)."""
    return Course.__table__ in select(Section.id).where(*where).get_final_froms()


def _course_sizes(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """How many sections matching ``where`` each course has: one row per course, from the
    (term, course) listing index alone when no condition reads a course column."""
    sizes = select(Section.course_id, func.count()).select_from(Section)
    if _reads_courses(where):
        sizes = sizes.join(Course, Course.id == Section.course_id)
    return sizes.where(*where).group_by(Section.course_id)


def _course_sections(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """The ids of the sections matching ``where``, with their course, in each course's catalog
    order (the sections of one course are listed by number, then CRN)."""
    found = select(Section.id, Section.course_id).select_from(Section)
    if _reads_courses(where):
        found = found.join(Course, Course.id == Section.course_id)
    return found.where(*where).order_by(Section.section_number, Section.crn)


def _course_summaries(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """:func:`_course_sections` as summaries (section_rows.summary_select), each row ending with
    its course id: a page of a few courses' sections read with its answer in one statement."""
    return (
        section_rows.summary_select(dialect, Section.course_id.label("course_id"))
        .where(*where)
        .order_by(Section.section_number, Section.crn)
    )


def _one_course_page(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """The summaries of ``page_limit`` sections of one course from its ``page_offset``-th, in the
    course's catalog order: the page ids from the (term, course) listing index, then their
    summaries, in one statement (as :func:`_page_of_matches` for a browse)."""
    found = select(Section.id).select_from(Section)
    if _reads_courses(where):
        found = found.join(Course, Course.id == Section.course_id)
    order = (Section.section_number, Section.crn)
    page_ids = (
        found.where(*where)
        .order_by(*order)
        .offset(bindparam("page_offset", type_=Integer))
        .limit(bindparam("page_limit", type_=Integer))
    )
    return section_rows.summary_select(dialect).where(Section.id.in_(page_ids)).order_by(*order)


_TITLED_MATCHES = ShapedStatements(_word_matches)
_COURSE_SIZES = ShapedStatements(_course_sizes)
_COURSE_SECTIONS = ShapedStatements(_course_sections)
_COURSE_SUMMARIES = ShapedStatements(_course_summaries)
_ONE_COURSE_PAGE = ShapedStatements(_one_course_page)


# The courses of a search by words, one expanding parameter: built once, not per call with its ids.
_OF_COURSES = Section.course_id.in_(bindparam("course_ids", expanding=True))
# A page's courses are read whole with their summaries when they have at most this many sections
# the page does not show (the last course's rest, the first's before a later page's offset).
MAX_UNSHOWN = 25


def _titled(words: str) -> list[ColumnElement[bool]]:
    """The sections with a title of their own that has the words. ``title IS NOT NULL`` as
    written: the partial index of titled sections (catalog_0006)."""
    return [Section.title.is_not(None), func.lower(Section.title).contains(words.lower(), autoescape=True)]


# Built once per distinct words, as the other filters are (statements.KeptConditions).
kept_titled = statements.KeptConditions(_titled)


async def _sections_by_words(
    session: AsyncSession, settings: Settings, dialect: str, where: list[ColumnElement[bool]], query: SectionSearch
) -> tuple[list[SectionSummary], int]:
    """The page of a search by title words, and the total: the sections of the best-matching
    course first, each course's in the catalog order, then the sections of other courses that
    have the words in a title of their own.

    Counted per course, then only the page's courses read: reading every match in order (805
    rows for "introduction programming" at --scale 67) to keep 25 was most of the search, in
    the database and in Python. The page's courses are read with their summaries in one
    statement (each statement is a call through SQLAlchemy, and was a trip to SQLite's
    thread), unless they have many sections the page does not show."""
    course_ids = await fulltext.matching_ids(session, "courses", query.q or "")
    sizes_of, params = _COURSE_SIZES.statement(settings, dialect, [*where, _OF_COURSES], course_ids=course_ids)
    sizes: dict[int, int] = {row[0]: row[1] for row in await statements.read_rows(session, sizes_of, params)}
    # A titled section of a matching course is already one of its course's.
    titled_of, params = _TITLED_MATCHES.statement(settings, dialect, [*where, *kept_titled(query.q or "")])
    others = [row[0] for row in await statements.read_rows(session, titled_of, params) if row[1] not in sizes]

    start, end = query.offset, query.offset + query.limit
    spanned: list[tuple[int, int, int]] = []  # a course of the page: its sections [first, last)
    position = 0
    for course_id in course_ids:
        size = sizes.get(course_id, 0)
        if size and position < end and position + size > start:
            spanned.append((course_id, max(start - position, 0), min(end - position, size)))
        position += size
    total = position + len(others)
    shown_others = others[max(start - position, 0) : max(end - position, 0)]
    page_courses = [course_id for course_id, _, _ in spanned]
    unshown = sum(sizes[course_id] - (last - first) for course_id, first, last in spanned)
    if spanned and not shown_others and unshown <= MAX_UNSHOWN:
        found_of, params = _COURSE_SUMMARIES.statement(
            settings, dialect, [*where, _OF_COURSES], course_ids=page_courses
        )
        rows_of: dict[int, list[Row[Any]]] = {}
        for row in await statements.read_rows(session, found_of, params):
            rows_of.setdefault(row[-1], []).append(row)
        page = [row for course_id, first, last in spanned for row in rows_of.get(course_id, [])[first:last]]
        return section_rows.summaries_of(page), total
    if len(spanned) == 1 and not shown_others:
        # A page within one big course (805 sections of "introduction programming" at --scale
        # 67): its slice picked by the database, not all of the course's ids brought back.
        ((course_id, first, last),) = spanned
        page_of, params = _ONE_COURSE_PAGE.statement(
            settings, dialect, [*where, _OF_COURSES], course_ids=[course_id], page_offset=first, page_limit=last - first
        )
        return section_rows.summaries_of(await statements.read_rows(session, page_of, params)), total
    ids: list[int] = []
    if spanned:
        found_of, params = _COURSE_SECTIONS.statement(settings, dialect, [*where, _OF_COURSES], course_ids=page_courses)
        of_course: dict[int, list[int]] = {}
        for section_id, course_id in await statements.read_rows(session, found_of, params):
            of_course.setdefault(course_id, []).append(section_id)
        for course_id, first, last in spanned:
            ids += of_course.get(course_id, [])[first:last]
    ids += shown_others
    return await section_rows.section_summaries(session, ids[: query.limit]), total


async def _count_past_the_end(session: AsyncSession, where: list[ColumnElement[bool]], query: SectionSearch) -> int:
    """The total of an empty page: 0 on the first page, else the count alone (an offset past the end)."""
    return (await session.scalar(_count(where)) or 0) if query.offset else 0


async def search_sections(
    session: AsyncSession, query: SectionSearch, settings: Settings, catalog: CatalogSettings
) -> SectionPage:
    term = await known_term(session, query.term, settings)
    if query.subject:
        query = query.model_copy(update={"subject": await resolve_subject(session, query.subject)})
    if query.attribute:
        query = query.model_copy(update={"attribute": await resolve_attribute(session, query.attribute)})
    teachers = await instructor_filter.few_teachers(session, query.instructor) if query.instructor else None
    if teachers == []:
        return SectionPage(term=term_ref(term), sections=[], **page_fields(query, 0))  # no such instructor
    dialect = session.get_bind().dialect.name
    where = kept_filters(query, term, teachers, dialect)

    note: str | None = None
    if query.q and query.semantic:
        depth = min(query.offset + query.limit, SEMANTIC_DEPTH)
        # The total is what the ranking could rank (sections with their own or their course's
        # vector), counted from the rows it reads; ``Section.embedding IS NOT NULL`` was both
        # slow (a vector column per row) and wrong for sections that share their course's vector.
        meant = await semantic.sections_by_meaning(session, query.q, within=_base(where), limit=depth)
        if not meant.total:
            # Nothing near by meaning among these sections: their title words instead, saying so.
            by_words, total = await _sections_by_words(session, settings, dialect, where, query)
            note = meaning_notes.by_title_words(query.q, "sections", total)
            return SectionPage(term=term_ref(term), sections=by_words, note=note, **page_fields(query, total))
        ids = [m.id for m in meant.matches][query.offset :]
        total = min(meant.total, SEMANTIC_DEPTH)
        note = meaning_notes.of_meaning(query.q, meant.closeness, "sections")
    elif query.q:
        # The sections of the matching courses (the (term, course) index), then the sections with
        # a title of their own that has the words: one test ``course_id IN ... OR title LIKE``
        # walked every section of the term (36,030 at --scale 67, where none has a title).
        found, total = await _sections_by_words(session, settings, dialect, where, query)
        return SectionPage(term=term_ref(term), sections=found, **page_fields(query, total))
    elif teachers is not None:
        ids, total = await instructor_filter.taught_page(session, settings, dialect, where, query)
    else:
        # The page and the count in one statement (see _page_of_matches), built once per shape.
        statement, params = _PAGES.statement(settings, dialect, where, page_offset=query.offset, page_limit=query.limit)
        page = await statements.read_rows(session, statement, params)
        total = page[0].total if page else await _count_past_the_end(session, where, query)
        return SectionPage(
            term=term_ref(term),
            sections=section_rows.summaries_of(page),
            **page_fields(query, total or 0),
        )
    return SectionPage(
        term=term_ref(term),
        sections=await section_rows.section_summaries(session, ids[: query.limit]),
        note=note,
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


async def crns_starting_with(session: AsyncSession, typed: str, term: str | None, settings: Settings) -> list[str]:
    """CRNs that start with ``typed`` (a completion): of ``term``, else of the current and coming
    terms, in order; at most 101, so the host can say there are more."""
    query = (
        select(Section.crn).join(Term, Term.id == Section.term_id).where(Section.crn.startswith(typed, autoescape=True))
    )
    if term is not None:
        query = query.where(Section.term_id == (await known_term(session, term, settings)).id)
    else:
        query = query.where(Term.end_date >= campus_today(settings.timezone))
    return list(dict.fromkeys(await session.scalars(query.order_by(Section.crn).limit(101))))


async def final_exam(session: AsyncSession, section: Section) -> FinalExamOut | None:
    """The exam of the section by CRN, else of its course, from the term's newest completed schedule."""
    return await exam_of(session, section.term_id, section.crn, section.course.code)


async def exam_of(session: AsyncSession, term_id: int, crn: str, course_code: str) -> FinalExamOut | None:
    """``final_exam`` from the section's keys, in one statement (section_detail.exam_select)."""
    dialect = session.get_bind().dialect.name
    found = await session.scalar(
        section_detail.exam_select(dialect), {"term_id": term_id, "crn": crn, "course_code": course_code}
    )
    return section_detail.exam_out(found)


async def get_section(
    session: AsyncSession, query: SectionLookup, settings: Settings, catalog: CatalogSettings
) -> SectionDetail:
    # One statement (section_detail.detail_select): the section by CRN with its answer's parts,
    # the briefs of its cross-listed and linked sections and its final exam.
    params: dict[str, Any] = {"crn": query.crn}
    if query.term is not None:
        params["term_id"] = (await known_term(session, query.term, settings)).id
    statement = section_detail.detail_select(session.get_bind().dialect.name, in_term=query.term is not None)
    row = (await session.execute(statement, params)).first()
    if row is None:
        await section_key(session, query.crn, query.term, settings)  # raises its NotFound
        raise NotFound(f"No section has CRN {query.crn}.", field="crn")  # deleted meanwhile
    (parts,) = section_rows.parts_of([row])
    base = section_rows.answer_of(parts)
    briefs = section_detail.briefs_of(row.briefs_json)
    return SectionDetail(
        **dict(base),
        cross_listed=[briefs[c] for c in base.cross_listed_crns if c in briefs],
        linked=[briefs[c] for c in base.linked_crns if c in briefs],
        final_exam=section_detail.exam_out(row.exam_json),
        seats_as_of=seats_as_of(
            _moment(row.seats_read_at), settings.timezone, refreshed=catalog.banner_live and bool(row.term_synced_at)
        ),
    )


def _moment(value: Any) -> datetime | None:
    """A time read by a Core statement: SQLite gives its text, PostgreSQL a datetime (UTC)."""
    if value is None or isinstance(value, datetime):
        return value
    moment = datetime.fromisoformat(str(value))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def similar_sections(
    session: AsyncSession, query: SimilarSectionsQuery, settings: Settings, catalog: CatalogSettings
) -> SimilarSections:
    """Other times of the same course first (its open sections of the same kind, so a full lecture
    is answered with the lectures that still have seats), then sections of other courses in the
    same term that teach something close: by meaning when the section has a vector, else by the
    words of its course title."""
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
    same_course = await _open_sections_of_course(
        session, section.id, section.course_id, section.schedule_type, term_id, query.limit
    )
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
    scored = [(i, SAME_COURSE_SCORE) for i in same_course] + scored
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
        sections=[
            SimilarSection(**summaries[i].model_dump(), score=score, same_course=i in same_course)
            for i, score in scored
            if i in summaries
        ],
    )


# A section of the same course ranks above any similar course (closeness by meaning is at most 1).
SAME_COURSE_SCORE = 1.0


async def _open_sections_of_course(
    session: AsyncSession, section_id: int, course_id: int, schedule_type: str | None, term_id: int, limit: int
) -> list[int]:
    """Ids of the course's other sections in the term with the same schedule type (a lab for a lab)
    that are not cancelled and not known to be full, by section number."""
    rows = await session.execute(
        select(Section.id)
        .where(
            Section.term_id == term_id,
            Section.course_id == course_id,
            Section.id != section_id,
            Section.cancelled.is_(False),
            Section.schedule_type.is_not_distinct_from(schedule_type),
            or_(Section.seats_available.is_(None), Section.seats_available > 0),
        )
        .order_by(Section.section_number, Section.id)
        .limit(limit)
    )
    return [int(i) for (i,) in rows]
