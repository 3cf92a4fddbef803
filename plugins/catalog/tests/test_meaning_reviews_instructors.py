"""Reviews and instructors by meaning, ranked from the compact vectors held in process
(``vector_index.compact_vectors``, half precision, re-scored from the stored vectors) or, for one
instructor's or one course's reviews, from those rows' stored vectors: the same rows in the same
order, and the same total, as scoring every stored vector; a changed vector is seen at once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from campus_catalog import semantic, vector_index
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Instructor, Review, Section, SectionInstructor
from campus_catalog.queries import instructors
from campus_catalog.queries.terms import resolve_term
from campus_catalog.schemas import InstructorSearch, ReviewSearch
from campus_mcp.testing import CampusHarness
from sqlalchemy import select, update

from .exact_ranking import Ranking, assert_page, ranked, ranked_for

DEPTH = instructors.SEMANTIC_DEPTH


async def _answer(campus: CampusHarness, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await campus.call(tool, arguments, scopes=["catalog"])
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def _sentiment_passes(sentiment: float | None, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if sentiment is None:
        return False
    if wanted == "positive":
        return sentiment >= instructors.POSITIVE_FROM
    if wanted == "negative":
        return sentiment <= instructors.NEGATIVE_TO
    return instructors.NEGATIVE_TO < sentiment < instructors.POSITIVE_FROM


async def _every_review_ranked(campus: CampusHarness, arguments: dict[str, Any]) -> Ranking:
    async with campus.sessions() as session:
        rows = (
            await session.execute(
                select(Review.id, Review.course_code, Review.sentiment, Instructor.pub_id, Review.embedding)
                .join(Instructor, Instructor.id == Review.instructor_id)
                .where(Review.embedding.is_not(None))
            )
        ).all()
    kept = [
        (row_id, row_id, blob)
        for row_id, course, sentiment, pub_id, blob in rows
        if arguments.get("course") in (None, course)
        and arguments.get("instructor") in (None, pub_id)
        and _sentiment_passes(sentiment, arguments.get("sentiment"))
    ]
    return ranked_for(kept, arguments["q"])


async def _assert_reviews_ranked(
    campus: CampusHarness, arguments: dict[str, Any], listed: list[int], total: int
) -> None:
    page = ReviewSearch.model_validate({"semantic": True, **arguments})
    ranking = await _every_review_ranked(campus, arguments)
    assert_page(listed, total, ranking, offset=page.offset, limit=page.limit, depth=DEPTH)


async def _samples(campus: CampusHarness) -> dict[str, str]:
    async with campus.sessions() as session:
        course, pub_id = (
            await session.execute(
                select(Review.course_code, Instructor.pub_id)
                .join(Instructor, Instructor.id == Review.instructor_id)
                .where(Review.course_code.is_not(None))
                .order_by(Review.id)
                .limit(1)
            )
        ).one()
    return {"course": course, "instructor": pub_id}


async def test_reviews_by_meaning_are_those_of_scoring_every_vector(demo_campus: CampusHarness) -> None:
    sample = await _samples(demo_campus)
    cases: list[dict[str, Any]] = [
        {"q": "explains clearly and is always available in office hours", "limit": 25},
        {"q": "the exams are unfair and the grading is harsh", "limit": 10, "offset": 7},
        {"q": "lots of homework but you learn a lot", "sentiment": "positive", "limit": 20},
        {"q": "boring lectures", "sentiment": "negative", "limit": 5, "offset": 190},
        {"q": "an average class", "sentiment": "neutral", "limit": 25},
        {"q": "funny and kind", "instructor": sample["instructor"]},
        {"q": "hard tests", "course": sample["course"], "sentiment": "negative", "limit": 3},
    ]
    for arguments in cases:
        answer = await _answer(demo_campus, "search_reviews", {"semantic": True, **arguments})
        listed = [r["id"] for r in answer["reviews"]]
        await _assert_reviews_ranked(demo_campus, arguments, listed, answer["total"])
    assert len(listed) or arguments  # the last case is about one course: it may list few

    # Held as float16 (a campus past HALF_FROM distinct vectors), with first candidates too few
    # to prove the page (the ranking widens until the error bound does): the same answers.
    # Called in process, past the answer cache.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_index, "HALF_FROM", 0)
        patch.setattr(semantic, "RESCORE_LEAST", 1)
        patch.setattr(semantic, "RESCORE_FIRST", 2)
        vector_index.forget()
        try:
            for arguments in cases[:5]:
                async with demo_campus.sessions() as session:
                    page = await instructors.search_reviews(
                        session,
                        ReviewSearch.model_validate({"semantic": True, **arguments}),
                        demo_campus.settings,
                        CatalogSettings(),
                    )
                    held = await vector_index.compact_vectors(session, "reviews", semantic.DIMENSIONS)
                assert held.distinct.dtype == np.float16 and held.error > 0
                await _assert_reviews_ranked(demo_campus, arguments, [r.id for r in page.reviews], page.total)
        finally:
            vector_index.forget()


async def test_instructors_by_meaning_are_those_of_scoring_every_vector(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        rows = (
            await session.execute(
                select(Instructor.id, Instructor.pub_id, Instructor.embedding).where(Instructor.embedding.is_not(None))
            )
        ).all()
        term = await resolve_term(session, None, demo_campus.settings)
        teaching_comp = set(
            (
                await session.scalars(
                    select(SectionInstructor.instructor_id)
                    .join(Section, Section.id == SectionInstructor.section_id)
                    .join(Course, Course.id == Section.course_id)
                    .where(Section.term_id == term.id, Course.subject_code == "COMP")
                )
            ).all()
        )
        course_rows = (await session.execute(select(Course.id, Course.id, Course.embedding))).all()
        taught = (
            await session.execute(
                select(Section.course_id, SectionInstructor.instructor_id).join(
                    SectionInstructor, SectionInstructor.section_id == Section.id
                )
            )
        ).all()
    everyone = [(i, pub_id, blob) for i, pub_id, blob in rows]

    def teachers_of(question: str) -> set[int]:
        # The candidates: those teaching a course about the question (semantic.teachers_by_meaning).
        # A course within TIE of the floor is counted by the server either way; none is here.
        about = set(ranked_for(course_rows, question).reaching(semantic.RELEVANCE_FLOOR, 0.0))
        return {teacher for course, teacher in taught if course in about}

    accounting, learning = teachers_of("teaches accounting and taxes"), teachers_of("machine learning and data")
    cases: list[tuple[dict[str, Any], list[tuple[int, Any, bytes]]]] = [
        ({"q": "teaches accounting and taxes", "limit": 10}, [r for r in everyone if r[0] in accounting]),
        ({"q": "machine learning and data", "limit": 5, "offset": 3}, [r for r in everyone if r[0] in learning]),
        (
            {"q": "machine learning and data", "subject": "COMP", "limit": 4},
            [r for r in everyone if r[0] in teaching_comp and r[0] in learning],
        ),
    ]
    for arguments, candidates in cases:
        answer = await _answer(demo_campus, "search_instructors", {"semantic": True, **arguments})
        listed = [i["pub_id"] for i in answer["instructors"]]
        ranking = ranked_for(candidates, arguments["q"])
        assert_page(
            listed, answer["total"], ranking, offset=arguments.get("offset", 0), limit=arguments["limit"], depth=DEPTH
        )
        assert listed

    # Similar instructors: every other instructor scored from its stored vector against this one's.
    first_id, first_pub, first_blob = everyone[0]
    others = ranked([row for row in everyone if row[0] != first_id], semantic.from_bytes(first_blob))
    similar = await _answer(demo_campus, "similar_instructors", {"pub_id": first_pub, "limit": 7})
    assert similar["method"] == "meaning"
    listed_similar = [i["pub_id"] for i in similar["instructors"]]
    assert_page(listed_similar, len(listed_similar), others, limit=7, depth=7)


async def test_a_review_search_sees_a_vector_written_after_the_last_one(demo_campus: CampusHarness) -> None:
    question = "the professor brought a live parrot to every lecture"
    arguments = {"semantic": True, "q": question, "limit": 3}
    before = await _answer(demo_campus, "search_reviews", arguments)
    async with demo_campus.sessions() as session:
        last = await session.scalar(select(Review.id).order_by(Review.id.desc()).limit(1))
        assert last is not None and last not in [r["id"] for r in before["reviews"]]
        vector = np.asarray(semantic.embed_query(question), dtype=np.float32)
        await session.execute(update(Review).where(Review.id == last).values(embedding=semantic.to_bytes(vector)))
        await session.commit()
    after = await _answer(demo_campus, "search_reviews", {**arguments, "limit": 4})
    assert after["reviews"][0]["id"] == last, after["reviews"]


async def test_a_search_reads_stored_vectors_only_of_its_candidates(demo_campus: CampusHarness) -> None:
    """Once the compact vectors are held (one read per data version), a review or instructor
    search by meaning reads stored vectors only by primary key (the re-scored candidates), never
    every matching row's, as each search did before (13 s per review search at --scale 67)."""
    from . import test_query_plans as plans

    settings, catalog = demo_campus.settings, CatalogSettings()
    sample = await _samples(demo_campus)
    questions = [
        ReviewSearch.model_validate({"semantic": True, "q": "clear explanations", "sentiment": "positive"}),
        ReviewSearch.model_validate({"semantic": True, "q": "hard exams", "instructor": sample["instructor"]}),
    ]
    async with demo_campus.sessions() as session:  # the once-per-version load
        await instructors.search_reviews(session, questions[0], settings, catalog)
        await instructors.search_instructors(
            session, InstructorSearch(q="statistics", semantic=True), settings, catalog
        )

    async def run(session: Any) -> object:
        for question in questions:
            assert (await instructors.search_reviews(session, question, settings, catalog)).reviews
        search = InstructorSearch(q="accounting", semantic=True)
        return await instructors.search_instructors(session, search, settings, catalog)

    statements = await plans._statements(demo_campus, run)
    reading = [" ".join(s.split()) for s, _ in statements if ".embedding" in s]
    # Held as float32 on the demo campus: no stored vector read at all; as float16, only the
    # candidates re-scored, by primary key.
    assert [s for s in reading if "catalog_reviews.id IN" not in s and "catalog_instructors.id IN" not in s] == []
