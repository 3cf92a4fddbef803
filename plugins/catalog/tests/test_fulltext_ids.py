"""``fulltext.matching_ids`` (the words of search_sections, search_courses, similar_sections) gives
the ids of ``fulltext.search`` without counting them first: one full-text statement when the
words match together, the same ids best first in every case."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from campus_catalog.queries import fulltext
from campus_mcp.testing import CampusHarness
from sqlalchemy import event

# All the words match; only some do (any of them, ranked); one word; nothing; only stopwords.
WORDS = [
    "introduction programming",
    "introduction to zzzunknownword",
    "calculus",
    "zzzunknownword",
    "the a of",
    "organic chemistry laboratory",
]


@contextmanager
def statements_run(campus: CampusHarness) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    engine = campus.deployment.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def test_the_ids_are_those_of_search(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        for kind in ("courses", "reviews"):
            for words in WORDS:
                for limit in (5000, 3):
                    ids, _total = await fulltext.search(session, kind, words, limit=limit)
                    assert await fulltext.matching_ids(session, kind, words, limit=limit) == ids, (kind, words)
        assert await fulltext.matching_ids(session, "courses", "introduction programming"), "the test sees matches"
        assert await fulltext.matching_ids(session, "courses", "zzzunknownword") == []


async def test_words_that_match_together_cost_one_statement(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        await session.connection()
        with statements_run(demo_campus) as seen:
            assert await fulltext.matching_ids(session, "courses", "introduction programming")
        assert len(seen) == 1, seen
        with statements_run(demo_campus) as seen:
            assert await fulltext.matching_ids(session, "courses", "zzzunknownword") == []
        assert len(seen) == 1, "one word is searched once, not as all of it and then as any of it"
