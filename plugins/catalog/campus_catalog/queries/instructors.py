"""Instructors (``Catalog::InstructorQuery``) and their RateMyProfessor reviews
(``Catalog::ReviewQuery``): by name, words, meaning or sentiment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from campus_mcp import InvalidInput, NotFound, Settings, student_text
from numpy.typing import NDArray
from sqlalchemy import ColumnElement, Integer, Row, Select, String, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from campus_catalog import semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Instructor, Review, Section, SectionInstructor
from campus_catalog.queries import fulltext, instructor_filter, instructor_names, section_rows
from campus_catalog.queries.clock import campus_moment
from campus_catalog.queries.serialize import REVIEW_TEXT_LENGTH, instructor_brief, page_fields, review_out
from campus_catalog.queries.subjects import resolve_subject
from campus_catalog.queries.terms import known_term, term_ref
from campus_catalog.schemas import (
    NOT_LOADED,
    InstructorDetail,
    InstructorLookup,
    InstructorPage,
    InstructorSearch,
    PersonRef,
    RatingDetail,
    ReviewOut,
    ReviewPage,
    ReviewSearch,
    SimilarInstructor,
    SimilarInstructors,
    SimilarInstructorsQuery,
)

SEMANTIC_DEPTH = 200
RECENT_REVIEWS = 5
# With other filters too, words are ranked among this many best matches, then filtered.
FILTERED_WORDS_DEPTH = 5000
# Sentiment runs from -1 (complaint) to 1 (praise); the middle band is "neither".
POSITIVE_FROM = 0.25
NEGATIVE_TO = -0.25


async def _load_instructors(session: AsyncSession, ids: list[int]) -> list[Instructor]:
    rows = (
        await session.scalars(select(Instructor).where(Instructor.id.in_(ids)).options(selectinload(Instructor.rating)))
    ).all()
    by_id = {i.id: i for i in rows}
    return [by_id[i] for i in ids if i in by_id]


async def find_instructor(session: AsyncSession, pub_id: str) -> Instructor:
    instructor = await session.scalar(
        select(Instructor).where(Instructor.pub_id == pub_id.strip()).options(selectinload(Instructor.rating))
    )
    if instructor is None:
        raise NotFound(
            f"No instructor has the pub_id {pub_id!r}. Find the pub_id with search_instructors by name.",
            field="pub_id",
        )
    return instructor


async def search_instructors(
    session: AsyncSession, query: InstructorSearch, settings: Settings, catalog: CatalogSettings
) -> InstructorPage:
    where: list[ColumnElement[bool]] = []
    if query.subject:
        term = await known_term(session, query.term, settings)
        where.append(
            Instructor.id.in_(
                select(SectionInstructor.instructor_id)
                .join(Section, Section.id == SectionInstructor.section_id)
                .join(Course, Course.id == Section.course_id)
                .where(Section.term_id == term.id, Course.subject_code == await resolve_subject(session, query.subject))
            )
        )
    if query.q and query.semantic:
        depth = min(query.offset + query.limit, SEMANTIC_DEPTH)
        # Those who teach a course about q (semantic.teachers_by_meaning), not every one ranked.
        matches, matching = await semantic.teachers_by_meaning(session, query.q, filters=where, limit=depth)
        total = min(matching, SEMANTIC_DEPTH)
        ids = [m.id for m in matches][query.offset : query.offset + query.limit]
    else:
        words = (query.q or "").lower().split()
        held = await _named_in_roster(session, words) if words and not where else None
        if held is not None:
            # The ids from the roster, then the page's order (the database's, by name) of those alone.
            where.append(Instructor.id.in_(held))
            total = len(held)
        else:
            for word in words:
                where.append(func.lower(Instructor.name).contains(word, autoescape=True))
            total = await session.scalar(select(func.count()).select_from(Instructor).where(*where)) or 0
        ids = list(
            (
                await session.scalars(
                    select(Instructor.id)
                    .where(*where)
                    .order_by(Instructor.name, Instructor.id)
                    .offset(query.offset)
                    .limit(query.limit)
                )
            ).all()
        )
    instructors = await _load_instructors(session, ids)
    return InstructorPage(instructors=[instructor_brief(i) for i in instructors], **page_fields(query, total))


# A search by name whose words name at most this many instructors pages them by their ids.
NAMED_FROM_ROSTER = 1000


async def _named_in_roster(session: AsyncSession, words: list[str]) -> list[int] | None:
    """The ids of the instructors whose name holds every word, from the roster held in process
    (instructor_names): at --scale 67 the database read and lowered all 20,100 names twice, for
    the count and for the page. None when the roster is not to be used (a
    session with uncommitted writes) or the words name more than NAMED_FROM_ROSTER (a page of
    "a" from the (name, id) index stops after it; an id list of 19,000 would not)."""
    roster = await instructor_names.roster(session)
    if roster is None:
        return None
    ids = roster.with_words(words)
    return ids if len(ids) <= NAMED_FROM_ROSTER else None


async def get_instructor(
    session: AsyncSession, query: InstructorLookup, settings: Settings, catalog: CatalogSettings
) -> InstructorDetail:
    instructor = await find_instructor(session, query.pub_id)
    term = await known_term(session, query.term, settings)
    section_ids = (
        await session.scalars(
            select(Section.id)
            .join(SectionInstructor, SectionInstructor.section_id == Section.id)
            .join(Course, Course.id == Section.course_id)
            .where(SectionInstructor.instructor_id == instructor.id, Section.term_id == term.id)
            .order_by(Course.subject_code, Course.course_number, Section.section_number)
        )
    ).all()
    reviews = (
        await session.scalars(
            select(Review)
            .where(Review.instructor_id == instructor.id)
            .order_by(Review.posted_on.desc(), Review.id.desc())
            .limit(RECENT_REVIEWS)
            .options(selectinload(Review.instructor))
        )
    ).all()
    rating = instructor.rating
    return InstructorDetail(
        pub_id=instructor.pub_id,
        name=instructor.name,
        department=instructor.department,
        email=instructor.email,
        rating=(
            RatingDetail(
                overall=rating.overall,
                difficulty=rating.difficulty,
                would_take_again_percent=rating.would_take_again_percent,
                rating_count=rating.rating_count,
                distribution=rating.distribution,
                tags=dict(sorted((rating.tag_counts or {}).items(), key=lambda kv: (-kv[1], kv[0]))),
                fetched_at=campus_moment(rating.fetched_at, settings.timezone)[0],
                fetched_at_text=campus_moment(rating.fetched_at, settings.timezone)[1],
            )
            if rating
            else NOT_LOADED  # no ratings of them here: unknown, not "unrated"
        ),
        recent_reviews=[review_out(r) for r in reviews],
        term=term_ref(term),
        # As a search lists them, from one Core statement (section_rows), not the ORM's object graph.
        sections=await section_rows.section_summaries(session, list(section_ids)),
    )


async def similar_instructors(
    session: AsyncSession, query: SimilarInstructorsQuery, settings: Settings, catalog: CatalogSettings
) -> SimilarInstructors:
    """Instructors who teach something close: by meaning when the instructor has a vector, else
    by how many subjects they share."""
    instructor = await find_instructor(session, query.pub_id)
    vector = await semantic.stored_vector(session, "instructors", instructor.id)
    scored: list[tuple[int, float]]
    if vector is not None:
        method = "meaning"
        matches, _matching = await semantic.people_by_meaning(
            session, "instructors", vector, exclude_ids=[instructor.id], limit=query.limit
        )
        scored = [(m.id, m.score) for m in matches]
    else:
        method = "subjects"
        taught = (
            select(Course.subject_code)
            .join(Section, Section.course_id == Course.id)
            .join(SectionInstructor, SectionInstructor.section_id == Section.id)
            .where(SectionInstructor.instructor_id == instructor.id)
        )
        shared = func.count(func.distinct(Course.subject_code))
        rows = await session.execute(
            select(SectionInstructor.instructor_id, shared)
            .join(Section, Section.id == SectionInstructor.section_id)
            .join(Course, Course.id == Section.course_id)
            .where(Course.subject_code.in_(taught), SectionInstructor.instructor_id != instructor.id)
            .group_by(SectionInstructor.instructor_id)
            .order_by(shared.desc(), SectionInstructor.instructor_id)
            .limit(query.limit)
        )
        scored = [(i, float(n)) for i, n in rows]
    loaded = {i.id: i for i in await _load_instructors(session, [i for i, _ in scored])}
    return SimilarInstructors(
        instructor=instructor_brief(instructor),
        method=method,
        instructors=[
            SimilarInstructor(**instructor_brief(loaded[i]).model_dump(), score=score)
            for i, score in scored
            if i in loaded
        ],
    )


# An instructor named ambiguously is answered with at most this many of those it names.
NAMED_LISTED = 5


async def named_instructor(session: AsyncSession, instructor: str) -> int:
    """The id of the one instructor ``instructor`` means: a pub_id, or a name or part of one
    ('Priya Costa', 'Costa'), as search_sections' instructor filter reads it. A name that fits
    several is an error naming them with their pub_ids (one whose whole name it is wins)."""
    found = await session.scalar(select(Instructor.id).where(Instructor.pub_id == instructor.strip()))
    if found is not None:
        return int(found)
    wanted = " ".join(instructor.split())
    ids = await instructor_filter.teachers_named(session, wanted, instructor_filter.FEW_TEACHERS)
    if len(ids) > instructor_filter.FEW_TEACHERS:
        raise InvalidInput(
            f"Instructor {instructor!r} fits too many instructors. Give more of the name, or the pub_id "
            "from search_instructors.",
            field="instructor",
        )
    if not ids:
        raise NotFound(
            f"No instructor is named {instructor!r}. Find them with search_instructors by a part of the name.",
            field="instructor",
        )
    if len(ids) == 1:
        return ids[0]
    rows = (
        await session.execute(
            select(Instructor.id, Instructor.name, Instructor.pub_id)
            .where(Instructor.id.in_(ids))
            .order_by(Instructor.name, Instructor.id)
        )
    ).all()
    whole = [row.id for row in rows if " ".join(row.name.split()).casefold() == wanted.casefold()]
    if len(whole) == 1:
        return int(whole[0])
    listed = ", ".join(f"{row.name} ({row.pub_id})" for row in rows[:NAMED_LISTED])
    more = f" and {len(rows) - NAMED_LISTED} more" if len(rows) > NAMED_LISTED else ""
    raise InvalidInput(
        f"Instructor {instructor!r} fits {len(rows)} instructors: {listed}{more}. Pass the pub_id of the one "
        "you mean, or ask the student which one.",
        field="instructor",
    )


async def search_reviews(
    session: AsyncSession, query: ReviewSearch, settings: Settings, catalog: CatalogSettings
) -> ReviewPage:
    # Whose reviews (by their indexes), then the sentiment.
    by_whom: list[ColumnElement[bool]] = []
    instructor_id = await named_instructor(session, query.instructor) if query.instructor else None
    if instructor_id is not None:
        by_whom.append(Review.instructor_id == instructor_id)
    if query.course:
        by_whom.append(Review.course_code == query.course)
    where = [*by_whom, *_sentiment_where(query.sentiment)]
    ids: list[int]
    if query.q and query.semantic:
        depth = min(query.offset + query.limit, SEMANTIC_DEPTH)
        # Ranked from the vectors held in process: the instructor and course are asked of the
        # database as ids (by their indexes), the sentiment tested on the sentiments held there.
        matches, matching = await semantic.people_by_meaning(
            session, "reviews", query.q, filters=by_whom, sentiment=_sentiment_test(query.sentiment), limit=depth
        )
        total = min(matching, SEMANTIC_DEPTH)
        ids = [m.id for m in matches][query.offset : query.offset + query.limit]
    elif query.q and not where:
        # Only the page is ranked; the total is a count of the matches, not of what was ranked.
        ranked, total = await fulltext.search(session, "reviews", query.q, limit=query.offset + query.limit)
        ids = ranked[query.offset :]
    elif query.q:
        ranked = await fulltext.matching_ids(session, "reviews", query.q, limit=FILTERED_WORDS_DEPTH)
        allowed = set((await session.scalars(select(Review.id).where(Review.id.in_(ranked), *where))).all())
        ranked = [i for i in ranked if i in allowed]
        total = len(ranked)
        ids = ranked[query.offset : query.offset + query.limit]
    else:
        # The page and its count in one statement (each statement is hops to SQLite's thread),
        # built once per shape of the filters (building it was a fifth of a call).
        shape = _review_page(instructor_id is not None, bool(query.course), query.sentiment)
        params = {
            "instructor_id": instructor_id,
            "course": query.course,
            "page_offset": query.offset,
            "page_limit": query.limit,
        }
        page = (await session.execute(shape, params)).all()
        total = (
            page[0].total
            if page
            else (await session.scalar(select(func.count()).select_from(Review).where(*where)) or 0)
        )
        return ReviewPage(reviews=[_review_of(row) for row in page], **page_fields(query, total))
    rows = {row.id: row for row in await session.execute(_review_select().where(Review.id.in_(ids)))}
    return ReviewPage(reviews=[_review_of(rows[i]) for i in ids if i in rows], **page_fields(query, total))


def _sentiment_where(sentiment: str | None) -> list[ColumnElement[bool]]:
    """The sentiment filter of :func:`search_reviews` in SQL."""
    if sentiment == "positive":
        return [Review.sentiment >= POSITIVE_FROM]
    if sentiment == "negative":
        return [Review.sentiment <= NEGATIVE_TO]
    if sentiment == "neutral":
        return [Review.sentiment > NEGATIVE_TO, Review.sentiment < POSITIVE_FROM]
    return []


# _review_page per shape (by instructor, by course, sentiment), built once.
_review_pages: dict[tuple[bool, bool, str | None], Select[*tuple[Any, ...]]] = {}


def _review_page(by_instructor: bool, by_course: bool, sentiment: str | None) -> Select[*tuple[Any, ...]]:
    """A page of reviews, newest first, with the count of all that match, in one statement: the
    filters are the parameters ``instructor_id`` and ``course``, the page ``page_offset`` and
    ``page_limit``."""
    key = (by_instructor, by_course, sentiment)
    statement = _review_pages.get(key)
    if statement is None:
        where: list[ColumnElement[bool]] = []
        if by_instructor:
            where.append(Review.instructor_id == bindparam("instructor_id", type_=Integer))
        if by_course:
            where.append(Review.course_code == bindparam("course", type_=String))
        where += _sentiment_where(sentiment)
        total_of = select(func.count()).select_from(Review).where(*where).scalar_subquery().label("total")
        statement = _review_pages[key] = (
            _review_select(total_of)
            .where(*where)
            .order_by(Review.posted_on.desc(), Review.id.desc())
            .offset(bindparam("page_offset", type_=Integer))
            .limit(bindparam("page_limit", type_=Integer))
        )
    return statement


def _sentiment_test(sentiment: str | None) -> Callable[[NDArray[np.float32]], NDArray[np.bool_]] | None:
    """The sentiment filter of :func:`search_reviews`, on the sentiments held in process (NaN,
    a review without one, passes no test, as NULL passes none in SQL)."""
    if sentiment == "positive":
        return lambda s: s >= POSITIVE_FROM
    if sentiment == "negative":
        return lambda s: s <= NEGATIVE_TO
    if sentiment == "neutral":
        return lambda s: (s > NEGATIVE_TO) & (s < POSITIVE_FROM)
    return None


def _review_select(*extra: ColumnElement[Any]) -> Select[*tuple[Any, ...]]:
    """Reviews with their instructor's name, as columns (no Review object, no vector read)."""
    return select(
        Review.id,
        Review.course_code,
        Review.posted_on,
        Review.overall,
        Review.difficulty,
        Review.would_take_again,
        Review.grade,
        Review.tags,
        Review.text,
        Review.sentiment,
        Instructor.pub_id,
        Instructor.name,
        *extra,
    ).join(Instructor, Instructor.id == Review.instructor_id)


def _review_of(row: Row[*tuple[Any, ...]]) -> ReviewOut:
    """``serialize.review_out`` of one row of :func:`_review_select`."""
    return ReviewOut(
        id=row.id,
        instructor=PersonRef(pub_id=row.pub_id, name=row.name),
        course_code=row.course_code,
        posted_on=row.posted_on,
        overall=row.overall,
        difficulty=row.difficulty,
        would_take_again=row.would_take_again,
        grade=row.grade,
        tags=list(row.tags or []),
        text=student_text(row.text, limit=REVIEW_TEXT_LENGTH),
        sentiment=row.sentiment,
    )
