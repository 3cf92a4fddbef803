"""Search by words on each backend's own full-text engine: SQLite FTS5, PostgreSQL tsvector.

A student's words, all of them required first; when that finds nothing, any of them, ranked
(BM25 on SQLite, ts_rank on PostgreSQL). Only ``\\w+`` tokens reach the engine, so no query
syntax from a student can break a search. The PostgreSQL expressions are those of the
migration's GIN indexes, so the index is used.

Courses match whole words: a word of the question finds the same word in a title or description,
or another form of it ("programs" finds "Programming"), never a longer or shorter word. The
engines stem ("humanities" and "human" are both "human" to Porter and to PostgreSQL's english
configuration), so their matches are checked against the words themselves (``same_word``):
"a humanities elective" found Human Anatomy labs. Reviews keep prefix terms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import PG_COURSE_DOCUMENT, PG_REVIEW_DOCUMENT, PG_TEXT_CONFIG
from campus_catalog.queries import statements

# Words students put around what they mean ("a class about ..."); they would only add noise.
STOPWORDS = frozenset(
    {"a", "an", "and", "any", "about", "are", "class", "classes", "course", "courses", "for", "i", "in", "is"}
    | {"me", "my", "of", "on", "or", "some", "that", "the", "to", "what", "which", "with", "want"}
)
MAX_TERMS = 12
FullTextKind = Literal["courses", "reviews"]

_SQLITE = {
    # bm25 weights: a word in a course title counts ten times a word in its description. The
    # title and description come with the id, for the whole-word check.
    "courses": "SELECT rowid AS id, title, description FROM catalog_courses_fts WHERE catalog_courses_fts MATCH :q "
    "ORDER BY bm25(catalog_courses_fts, 10.0, 1.0), rowid",
    "reviews": "SELECT rowid AS id FROM catalog_reviews_fts WHERE catalog_reviews_fts MATCH :q "
    "ORDER BY bm25(catalog_reviews_fts), rowid",
}
# Built from this module's constants only; the student's words go in as the bound :q.
_PG = {
    "courses": f"SELECT id, title, description FROM catalog_courses WHERE to_tsvector('{PG_TEXT_CONFIG}', {PG_COURSE_DOCUMENT}) "  # noqa: S608
    f"@@ to_tsquery('{PG_TEXT_CONFIG}', :q) "
    f"ORDER BY ts_rank(to_tsvector('{PG_TEXT_CONFIG}', {PG_COURSE_DOCUMENT}), "
    f"to_tsquery('{PG_TEXT_CONFIG}', :q)) DESC, id",
    "reviews": f"SELECT id FROM catalog_reviews WHERE to_tsvector('{PG_TEXT_CONFIG}', {PG_REVIEW_DOCUMENT}) "  # noqa: S608
    f"@@ to_tsquery('{PG_TEXT_CONFIG}', :q) "
    f"ORDER BY ts_rank(to_tsvector('{PG_TEXT_CONFIG}', {PG_REVIEW_DOCUMENT}), "
    f"to_tsquery('{PG_TEXT_CONFIG}', :q)) DESC, id",
}


def search_terms(words: str) -> list[str]:
    tokens = [t for t in re.findall(r"\w+", words.lower()) if t not in STOPWORDS]
    return list(dict.fromkeys(tokens))[:MAX_TERMS]


def word_form(word: str) -> str:
    """A word without the endings of its other forms (plural, -ing, -ed, a doubled last
    consonant): "programs" and "Programming" are "program", "humanities" is "humanity" and
    "human" stays "human". Lighter than a stemmer on purpose: only forms of one word meet."""
    word = word.lower().removesuffix("'s")
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def same_word(terms: list[str], text: str, *, every: bool) -> bool:
    """Whether ``text`` has the words of ``terms`` as whole words (in any of their forms): every
    one of them, or at least one."""
    forms = {word_form(word) for word in re.findall(r"\w+", text.lower())}
    found = (word_form(term) in forms for term in terms)
    return all(found) if every else any(found)


def _sqlite_query(terms: list[str], joiner: str, prefix: bool) -> str:
    return joiner.join(f'"{t}"*' if prefix else f'"{t}"' for t in terms)


def _pg_query(terms: list[str], joiner: str, prefix: bool) -> str:
    return joiner.join(f"{t}:*" if prefix else t for t in terms)


def _statements(
    session: AsyncSession, kind: FullTextKind
) -> tuple[str, str, Callable[[list[str], str, bool], str], tuple[str, str]]:
    if session.get_bind().dialect.name == "postgresql":
        ranked = _PG[kind]
        count = f"SELECT count(*) FROM ({ranked}) AS matches"  # noqa: S608
        return ranked, count, _pg_query, (" & ", " | ")
    ranked = _SQLITE[kind]
    table = f"catalog_{kind}_fts"
    count = f"SELECT count(*) FROM {table} WHERE {table} MATCH :q"  # noqa: S608
    return ranked, count, _sqlite_query, (" ", " OR ")


async def search(session: AsyncSession, kind: FullTextKind, words: str, *, limit: int = 5000) -> tuple[list[int], int]:
    """The ids of the best ``limit`` rows whose text has the words, best first, and how many rows
    have them in all (all words if any row has them all, else any of them)."""
    terms = search_terms(words)
    if not terms:
        return [], 0
    if kind == "courses":
        ids = await matching_ids(session, kind, words, limit=limit)
        return ids, len(ids)
    ranked, count, build, joiners = _statements(session, kind)
    for joiner in joiners:
        query = build(terms, joiner, True)
        total = int(await session.scalar(text(count), {"q": query}) or 0)
        if total or joiner == joiners[-1]:
            rows = await session.execute(text(f"{ranked} LIMIT :limit"), {"q": query, "limit": limit})
            return [int(row[0]) for row in rows], total
    return [], 0


async def matching_ids(session: AsyncSession, kind: FullTextKind, words: str, *, limit: int = 5000) -> list[int]:
    """Ids of the rows whose text has the words, best first. Empty when no word is left.

    The ids of :func:`search` without its count: the ranked rows of all the words, else of any
    of them. One full-text statement where the words match together instead of two (each is a
    hop to SQLite's thread), and one word is not searched twice."""
    terms = search_terms(words)
    if not terms:
        return []
    ranked, _count, build, joiners = _statements(session, kind)
    statement = _limited.get(ranked)
    if statement is None:
        statement = _limited[ranked] = text(f"{ranked} LIMIT :limit")
    whole_words = kind == "courses"
    tried = ""
    for joiner, every in zip(joiners, (True, False), strict=True):
        query = build(terms, joiner, not whole_words)
        if query != tried:
            tried = query
            rows = await statements.read_rows(session, statement, {"q": query, "limit": limit})
            if whole_words:
                rows = [row for row in rows if same_word(terms, f"{row[1] or ''} {row[2] or ''}", every=every)]
            if rows:
                return [int(row[0]) for row in rows]
    return []


# matching_ids' statements, one per engine and kind, made once (a text() and its cache key per
# call were a visible part of a search by words).
_limited: dict[str, TextClause] = {}
