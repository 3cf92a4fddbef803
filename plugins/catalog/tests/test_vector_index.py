"""Sections by meaning ranked from the vectors held in process (``campus_catalog.vector_index``):
the same sections in the same order, and the same total, as ranking every candidate's own stored
vector; a search right after vectors change (an import's fill, a refresh) sees the change in the
same process; two databases in one process each get their own vectors."""

from __future__ import annotations

from typing import Any

import pytest
from campus_catalog import data_version, semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import Course, Section
from campus_catalog.queries import sections
from campus_catalog.queries.terms import resolve_term
from campus_catalog.schemas import SectionSearch
from campus_mcp import InvalidInput, read_versions, version_bump
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from .exact_ranking import assert_page, ranked_for

STOCK_MARKET = "a class about the stock market"


async def _search(campus: CampusHarness, arguments: dict[str, Any]) -> tuple[list[str], int]:
    result = await campus.call("search_sections", {"semantic": True, **arguments}, scopes=["catalog"])
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer is not None
    return [s["crn"] for s in answer["sections"]], answer["total"]


async def _question_floor(session: AsyncSession, question: str) -> float | None:
    """The floor of a question by the definition (semantic.question_floor): from the best score
    of any course or titled section of the catalog, each by its own stored vector."""
    courses = (await session.execute(select(Course.id, Course.id, Course.embedding))).all()
    titled = (
        await session.execute(select(Section.id, Section.id, Section.embedding).where(Section.title.is_not(None)))
    ).all()
    scores = [*ranked_for(courses, question).scores.values(), *ranked_for(titled, question).scores.values()]
    return semantic.question_floor(max(scores, default=-1.0))[0]


async def _assert_every_vector_ranked(
    campus: CampusHarness, arguments: dict[str, Any], page: tuple[list[str], int]
) -> None:
    """That ``page`` (CRNs and total) is the answer by the definition: every candidate section's
    own stored vector scored against the question, those reaching the question's floor, best
    first, ties by id, up to the ranking's depth (exact_ranking: rank by rank, within float32's
    rounding). A question with no floor (nothing near) is a search of title words: not this."""
    query = SectionSearch.model_validate({"semantic": True, **arguments})
    assert query.q is not None
    async with campus.sessions() as session:
        term = await resolve_term(session, query.term, campus.settings)
        candidates = sections._base(sections.section_filters(query, term)).add_columns(Section.crn, Section.embedding)
        rows = (await session.execute(candidates)).all()
        floor = await _question_floor(session, query.q)
    if floor is None:
        return
    ranking = ranked_for(rows, query.q)
    listed, total = page
    assert_page(
        listed,
        total,
        ranking,
        offset=query.offset,
        limit=query.limit,
        depth=sections.SEMANTIC_DEPTH,
        floor=floor,
    )


CASES: list[dict[str, Any]] = [
    {"q": STOCK_MARKET, "limit": 10},
    {"q": STOCK_MARKET, "limit": 3, "offset": 2},
    {"q": "learn to code from scratch", "limit": 25},
    {"q": "learn to code from scratch", "limit": 4, "offset": 5},
    {"q": "build a robot", "open_only": True},
    {"q": "how to manage my own money and student loans", "days": "TR"},
    {"q": "intro to programming", "subject": "COMP", "limit": 7},
    {"q": "the science of being happy", "limit": 1},
    {"q": "underwater basket weaving"},
]


async def test_the_page_and_total_are_those_of_ranking_every_vector(demo_campus: CampusHarness) -> None:
    for arguments in CASES:
        await _assert_every_vector_ranked(demo_campus, arguments, await _search(demo_campus, arguments))
    # Not a vacuous comparison: the questions find sections, several of them more than a page.
    assert len((await _search(demo_campus, {"q": "learn to code from scratch", "limit": 100}))[0]) > 9


async def _set_vectors(campus: CampusHarness, course_code: str, blob: bytes | None) -> None:
    """Give a course and its untitled sections another vector (``None``: none), committed."""
    subject, number = course_code.split()
    async with campus.sessions() as session:
        course_id = await session.scalar(
            select(Course.id).where(Course.subject_code == subject, Course.course_number == number)
        )
        await session.execute(update(Course).where(Course.id == course_id).values(embedding=blob))
        await session.execute(update(Section).where(Section.course_id == course_id).values(embedding=blob))
        await session.commit()


async def test_a_search_sees_vectors_written_after_the_last_one(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    question = {"q": STOCK_MARKET, "limit": 100}
    before, before_total = await _search(campus, question)
    assert before, before
    # A refresh drops FINC 3500's vectors (new description, not yet embedded): it is not found...
    await _set_vectors(campus, "FINC 3500", None)
    without, without_total = await _search(campus, question)
    assert without_total < before_total and set(without) < set(before), (without, before)
    await _assert_every_vector_ranked(campus, question, (without, without_total))

    # ...and a topics section of an unrelated course gets a title of its own about the subject.
    async with campus.sessions() as session:
        term = await resolve_term(session, None, campus.settings)
        art = await session.scalar(
            select(Section.id)
            .join(Course, Course.id == Section.course_id)
            .where(Course.subject_code == "ARTS", Section.term_id == term.id, Section.cancelled.is_(False))
            .limit(1)
        )
        assert art is not None
        await session.execute(
            update(Section).where(Section.id == art).values(title="Investing in the Stock Market", embedding=None)
        )
        await session.commit()
    # The import's fill writes the missing vectors (the model embeds them): the next search in
    # this process ranks them, the titled section by its own vector. Closer to the question than
    # any course, it is listed first, and the question's floor rises with it (semantic.question_floor).
    async with campus.sessions() as session:
        filled = await semantic.fill_missing_vectors(session)
        await session.commit()
    assert filled["courses"] == 1 and filled["sections"] > 1, filled
    after, after_total = await _search(campus, question)
    await _assert_every_vector_ranked(campus, question, (after, after_total))
    async with campus.sessions() as session:
        art_crn = await session.scalar(select(Section.crn).where(Section.id == art))
    assert after[0] == art_crn, (after, before)


async def test_two_databases_at_the_same_version_keep_their_own_vectors(
    demo_campus: CampusHarness, campus_factory: CampusFactory
) -> None:
    other = await campus_factory(demo=True)
    await _set_vectors(other, "FINC 3500", None)
    # The campus behind has its data version bumped to the other's: only the database tells them apart.
    key = [data_version.KEY]
    async with demo_campus.sessions() as demo, other.sessions() as copy:
        first, second = [(await read_versions(session, key))[data_version.KEY] for session in (demo, copy)]
        behind = demo if first < second else copy
        for _ in range(abs(first - second)):
            await behind.execute(version_bump(behind.get_bind().dialect.name, key))
        await behind.commit()
        assert await read_versions(demo, key) == await read_versions(copy, key)
    # Limits no other test asks for: the answer cache (keyed by the version too) must not answer.
    demo_first = await _search(demo_campus, {"q": STOCK_MARKET, "limit": 99})
    question = {"q": STOCK_MARKET, "limit": 98}
    other_page = await _search(other, question)
    await _assert_every_vector_ranked(other, question, other_page)
    assert other_page[1] < demo_first[1], (other_page, demo_first)
    assert await _search(demo_campus, question) == demo_first


def test_a_question_asked_again_is_not_embedded_again() -> None:
    question = "a class about the history of jazz, asked twice"
    first = semantic.embed_query(question)
    assert semantic.remembered_question(question) is first
    # The same words, spaced otherwise: the same question.
    assert semantic.embed_query("  a class about the history of jazz,  asked twice ") is first
    assert not first.flags.writeable


async def test_a_session_ranks_its_own_uncommitted_vectors_and_a_rollback_leaves_nothing(
    demo_campus: CampusHarness,
) -> None:
    query = SectionSearch.model_validate({"q": STOCK_MARKET, "semantic": True, "limit": 97})

    async def crns(session: AsyncSession) -> list[str]:
        page = await sections.search_sections(session, query, demo_campus.settings, CatalogSettings())
        return [s.crn for s in page.sections]

    async with demo_campus.sessions() as session:
        before = await crns(session)
    async with demo_campus.sessions() as session:
        finance = select(Course.id).where(Course.subject_code == "FINC", Course.course_number == "3500")
        await session.execute(update(Course).where(Course.id.in_(finance.scalar_subquery())).values(embedding=None))
        within = await crns(session)
        await session.rollback()
    assert set(within) < set(before), (within, before)
    async with demo_campus.sessions() as session:
        assert await crns(session) == before


@pytest.mark.parametrize(
    "arguments",
    [{"q": STOCK_MARKET}, {"q": "learn to code from scratch", "limit": 3}, {"q": "build a robot", "subject": "MECH"}],
)
async def test_courses_by_meaning_are_those_of_ranking_every_vector(
    demo_campus: CampusHarness, arguments: dict[str, Any]
) -> None:
    result = await demo_campus.call("search_courses", {"semantic": True, **arguments}, scopes=["catalog"])
    assert not result.is_error and result.structured_content is not None, result.content
    async with demo_campus.sessions() as session:
        rows = (
            await session.execute(
                select(Course.id, Course.subject_code, Course.course_number, Course.embedding).where(
                    Course.subject_code == arguments.get("subject", Course.subject_code)
                )
            )
        ).all()
        every = (await session.execute(select(Course.id, Course.id, Course.embedding))).all()
    floor = semantic.question_floor(max(ranked_for(every, arguments["q"]).scores.values()))[0]
    assert floor is not None
    ranking = ranked_for([(i, f"{s} {n}", blob) for i, s, n, blob in rows], arguments["q"])
    answer = result.structured_content
    listed = [c["code"] for c in answer["courses"]]
    assert_page(listed, answer["total"], ranking, limit=arguments.get("limit", 25), floor=floor)


async def test_a_repeated_question_still_spends_the_allowance(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        within = select(Section.id)
        semantic.embed_query(STOCK_MARKET)  # kept: the second search needs no model
        with semantic.semantic_allowance(1, "one search by meaning per query") as allowance:
            await semantic.sections_by_meaning(session, STOCK_MARKET, within=within, limit=1)
            with pytest.raises(InvalidInput, match="one search by meaning per query"):
                await semantic.sections_by_meaning(session, STOCK_MARKET, within=within, limit=1)
        assert allowance.spent == 1
