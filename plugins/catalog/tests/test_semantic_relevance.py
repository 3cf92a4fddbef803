"""Relevance on the demo campus, through the MCP tools a client calls: a student's words find
what the student means, by title words and by meaning, and reviews by meaning find reviews that
say the same thing in other words."""

from __future__ import annotations

from typing import Any

import pytest
from campus_catalog import semantic
from campus_catalog.models import Review
from campus_mcp.testing import CampusHarness
from sqlalchemy import select


async def _call(campus: CampusHarness, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await campus.call(tool, arguments, scopes=["catalog"])
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def _codes(page: dict[str, Any], key: str = "courses") -> list[str]:
    return [item["code"] for item in page[key]]


@pytest.mark.parametrize(
    ("words", "expected"),
    [("intro to programming", "COMP 1000"), ("database", "COMP 2350"), ("calculus", "MATH 1750")],
)
async def test_title_words_find_the_course(demo_campus: CampusHarness, words: str, expected: str) -> None:
    page = await _call(demo_campus, "search_courses", {"q": words})
    assert expected in _codes(page)[:3], _codes(page)


@pytest.mark.parametrize(
    ("meaning", "expected"),
    [
        ("a class about the stock market", "FINC 3300"),
        ("intro to programming", "COMP 1000"),
        ("learn to code from scratch", "COMP 1000"),
        ("how to manage my own money and student loans", "FINC 2000"),
        ("hacking into computers legally", "CYBR 3300"),
        ("build a robot", "MECH 4300"),
        ("why people buy things", "MKTG 2500"),
        ("the science of being happy", "PSYC 3100"),
    ],
)
async def test_a_meaning_finds_the_course_a_student_means(
    demo_campus: CampusHarness, meaning: str, expected: str
) -> None:
    page = await _call(demo_campus, "search_courses", {"q": meaning, "semantic": True, "limit": 5})
    assert expected in _codes(page)[:3], _codes(page)


async def test_sections_by_meaning_are_sections_of_the_course_meant(demo_campus: CampusHarness) -> None:
    # No term given: the current term, as a student asking "this term" means.
    page = await _call(
        demo_campus, "search_sections", {"q": "a class about the stock market", "semantic": True, "limit": 5}
    )
    codes = [s["course_code"] for s in page["sections"]]
    assert codes and all(code.startswith("FINC") for code in codes[:2]), codes
    # The course meant comes first whenever the term offers it (the demo cancels some sections).
    offered = await _call(demo_campus, "search_sections", {"subject": "FINC", "course_number": "3300"})
    if offered["sections"]:
        assert codes[0] == "FINC 3300", codes


async def test_reviews_by_meaning_say_it_in_other_words(demo_campus: CampusHarness) -> None:
    question = "the teacher makes difficult material simple to understand"
    page = await _call(demo_campus, "search_reviews", {"q": question, "semantic": True, "limit": 10})
    texts = [r["text"]["untrusted_text"] for r in page["reviews"]]
    assert len(texts) == 10
    # The demo says it as "Makes hard topics easy to follow." and "Explains everything clearly ...":
    # none of the question's content words.
    hits = [t for t in texts if "easy to follow" in t or "Explains everything clearly" in t]
    assert len(hits) >= 6, texts
    assert any("Makes hard topics easy to follow." in t for t in hits), texts


async def test_reviews_by_meaning_find_complaints_about_exams(demo_campus: CampusHarness) -> None:
    page = await _call(
        demo_campus, "search_reviews", {"q": "the exams are extremely hard", "semantic": True, "limit": 10}
    )
    texts = " ".join(r["text"]["untrusted_text"] for r in page["reviews"]).lower()
    assert "tests are brutal" in texts or "exams have nothing to do" in texts or "exams are really difficult" in texts


async def test_a_sentiment_filter_separates_praise_from_complaint(demo_campus: CampusHarness) -> None:
    praise = await _call(demo_campus, "search_reviews", {"sentiment": "positive", "limit": 50})
    complaint = await _call(demo_campus, "search_reviews", {"sentiment": "negative", "limit": 50})
    assert praise["reviews"] and complaint["reviews"]
    assert all(r["sentiment"] > 0 for r in praise["reviews"])
    assert all(r["sentiment"] < 0 for r in complaint["reviews"])
    assert all((r["overall"] or 0) >= 4 for r in praise["reviews"])
    assert all((r["overall"] or 5) <= 2 for r in complaint["reviews"])
    # Meaning and sentiment together: "helpful" praise only, never a complaint that mentions help.
    helpful = await _call(
        demo_campus,
        "search_reviews",
        {"q": "helpful professor", "semantic": True, "sentiment": "positive", "limit": 20},
    )
    assert helpful["reviews"] and all(r["sentiment"] > 0 for r in helpful["reviews"])


async def test_semantic_search_ranks_within_the_filters(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        matches = await semantic.semantic_search(
            session, "reviews", "rude and condescending", filters=[Review.sentiment <= -0.5], limit=5
        )
        assert len(matches) == 5
        assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
        rows = (await session.execute(select(Review.text).where(Review.id.in_([m.id for m in matches])))).scalars()
        assert any("Rude" in t or "Condescending" in t for t in rows)
