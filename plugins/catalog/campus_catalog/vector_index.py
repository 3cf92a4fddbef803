"""The vectors a search by meaning scores, held in process as matrices, keyed by the catalog's vectors version.

A search for sections by meaning scores every course of the catalog (its untitled sections share
its vector) and every section with a title of its own (a topics course's section has its own
vector). Reading those vectors for each search cost two statements and a 1.5 KB blob per course;
they change only when a write changes a vector or what decides which rows have one, which bumps
that kind's vectors version (``data_version.vectors_version``) in the same transaction: not a
seat count, which moves only the data version. So each process keeps them here, one snapshot per
database and kind, and a search reads only the versions (one statement, shared with the answer
cache's read of the data version) to know its snapshot is current: right after an import or a
refresh that writes vectors, in this process or another sharing the database, the next search
reloads. Scoring a snapshot is one matrix product (microseconds for a catalog's courses), so what
a search costs no longer grows with the number of sections.

The version is read *before* the vectors (or was, by the call's answer cache, in the same
transaction): a snapshot may then be newer than its version says (reloaded once more at the next
search), never older.

A server loads every snapshot in the background when it starts (:func:`warm_up`, the catalog
plugin's warm-up), so a student's first search by meaning does not pay the load (9-18 s for the
335,000 reviews of ``--scale 67`` on SQLite). One load per snapshot at a time: a search arriving
while that load (or another search's) is under way waits for it instead of starting a second.
"""

from __future__ import annotations

import array
import asyncio
import dataclasses
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
import numpy as np
from campus_mcp import LRU
from numpy.typing import NDArray
from sqlalchemy import select

from campus_catalog import data_version
from campus_catalog.models import Course, Instructor, Review, Section

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

_Loaded = TypeVar("_Loaded")

# Databases kept at once: a server has one; the test suite makes many campuses in one process,
# and a demo campus's snapshot is about 250 KB.
DATABASES_KEPT = 8


@dataclasses.dataclass(frozen=True)
class VectorTable:
    """Rows of one kind that have a vector: their ids and their vectors, one row each."""

    ids: NDArray[np.int64]
    matrix: NDArray[np.float32]

    @classmethod
    def of(cls, rows: Any, dimensions: int) -> VectorTable:
        """From (id, stored vector) rows: float32 little-endian, as ``semantic.to_bytes`` writes."""
        ids: list[int] = []
        blobs: list[bytes] = []
        for row_id, blob in rows:
            if len(blob) != dimensions * 4:
                raise ValueError(f"A stored vector has {len(blob) // 4} numbers, the model gives {dimensions}.")
            ids.append(int(row_id))
            blobs.append(blob)
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dimensions).astype(np.float32)
        return cls(ids=np.asarray(ids, dtype=np.int64), matrix=matrix)

    def scores(self, target: NDArray[np.float32]) -> NDArray[np.float32]:
        """Cosine similarity of each row to ``target`` (the vectors are normalised).

        ``einsum``, not ``matrix @ target``: BLAS sums some rows in another order than others, so
        two rows with the same vector (a course's copies on a scaled campus) could differ in the
        last bit and be listed out of id order; einsum sums every row alike.
        """
        scored: NDArray[np.float32] = np.einsum("ij,j->i", self.matrix, target.astype(np.float32, copy=False))
        return scored


@dataclasses.dataclass(frozen=True)
class CatalogVectors:
    """One database's vectors at one vectors version (kind ``catalog``)."""

    version: int
    courses: VectorTable
    titled_sections: VectorTable


_snapshots: LRU[str, CatalogVectors] = LRU(DATABASES_KEPT)


async def catalog_vectors(session: AsyncSession, dimensions: int) -> CatalogVectors:
    """The vectors of the session's database, as of its current vectors version
    (``dimensions``: the model's, ``semantic.DIMENSIONS``)."""
    key = data_version.database_key(session)
    # A tool call's answer cache has read the versions already in this transaction (no query then).
    version = await data_version.vectors_version(session, "catalog")
    # A session holding catalog writes of its own (an import's fill, before it commits) ranks
    # what it wrote, and keeps nothing: the writes may yet be rolled back.
    writing = data_version.writing(session)
    snapshot = _snapshots.get(key)
    if snapshot is not None and snapshot.version == version and not writing:
        return snapshot
    if writing:
        return await _load_catalog(session, version, dimensions)

    async def load_and_keep() -> CatalogVectors:
        loaded = await _load_catalog(session, version, dimensions)
        # Two loads of one version may still overlap (two event loops); either is right, the last stays.
        return _snapshots.put(key, loaded)

    return await _once((key, "catalog", version), load_and_keep)


async def _load_catalog(session: AsyncSession, version: int, dimensions: int) -> CatalogVectors:
    courses = await session.execute(select(Course.id, Course.embedding).where(Course.embedding.is_not(None)))
    courses_table = VectorTable.of(courses, dimensions)
    titled = await session.execute(
        select(Section.id, Section.embedding).where(Section.title.is_not(None), Section.embedding.is_not(None))
    )
    return CatalogVectors(version=version, courses=courses_table, titled_sections=VectorTable.of(titled, dimensions))


@dataclasses.dataclass
class _Load:
    """A load under way: its result (``None`` if it failed) and how many searches wait for it."""

    done: asyncio.Future[Any]
    waiting: int = 0


# Loads under way, by (database, kind, version); each future belongs to the loop it runs on.
_loading: dict[tuple[str, str, int], _Load] = {}


async def _once(key: tuple[str, str, int], load: Callable[[], Awaitable[_Loaded]]) -> _Loaded:
    """``load()``, unless the same snapshot is being loaded on this event loop: then its result.

    A waiter that finds the load failed or cancelled (a server stopping during its warm-up)
    loads for itself, so it sees its own error, not another's.
    """
    loop = asyncio.get_running_loop()
    pending = _loading.get(key)
    if pending is not None and pending.done.get_loop() is loop:
        pending.waiting += 1
        # asyncio.wait, not ``await pending.done``: a waiter cancelled must not cancel the load.
        await asyncio.wait([pending.done])
        shared = pending.done.result()
        if shared is not None:
            loaded: _Loaded = shared
            return loaded
        return await load()
    under_way = _Load(done=loop.create_future())
    _loading[key] = under_way
    result: _Loaded | None = None
    try:
        result = await load()
        return result
    finally:
        if _loading.get(key) is under_way:
            del _loading[key]
        under_way.done.set_result(result)


def waiting(database_key: str, kind: str) -> int:
    """How many searches wait for a load of one kind's snapshot under way (the tests)."""
    return sum(
        load.waiting for (key, of_kind, _version), load in _loading.items() if (key, of_kind) == (database_key, kind)
    )


async def warm_up(sessions: async_sessionmaker[AsyncSession], dimensions: int) -> list[str]:
    """Load every snapshot of the sessions' database: what a server does when it starts, in the
    background, so that no student's search pays a load. The kinds loaded, in order."""
    loaded: list[str] = []
    async with sessions() as session:
        await catalog_vectors(session, dimensions)
        loaded.append("catalog")
        for kind in PEOPLE_KINDS:
            await compact_vectors(session, kind, dimensions)
            loaded.append(kind)
    return loaded


def held(database_key: str) -> list[str]:
    """The kinds whose snapshot this process holds for a database (the vector-index tests)."""
    kinds = ["catalog"] if database_key in _snapshots else []
    return kinds + [kind for kind in PEOPLE_KINDS if (database_key, kind) in _people]


def forget() -> None:
    """Drop every snapshot (tests that measure a cold search)."""
    _snapshots.clear()
    _people.clear()


# ----------------------------------------------------------------------------- instructors, reviews

# Scoring rows in chunks of this many distinct vectors keeps the float32 copy a search makes small.
SCORE_CHUNK = 8192
# Past this many distinct vectors (56 MB as float32) a kind's are held as float16.
HALF_FROM = 40_000
# Rows streamed per round trip while a snapshot loads, so loading never holds every blob at once:
# each row held costs ~3 KB while its chunk is hashed (the driver's blob and its copy). At
# --scale 67 on SQLite (335,000 reviews) the load's peak was +186 MB over the process with
# 20,000 rows (and lists) and is +109 MB with 5,000 (and arrays), in 5.6 and 6.0 s.
LOAD_CHUNK = 5_000
PEOPLE_KINDS = ("instructors", "reviews")


@dataclasses.dataclass(frozen=True)
class CompactVectors:
    """The vectors of one kind's rows, held compactly: each distinct vector once.

    Instructors' and reviews' vectors are many (335,000 reviews and 20,100 instructors at
    ``--scale 67``: 515 MB and 31 MB as float32) and repeat (an instructor's vector is the mean
    of the courses they teach; copied catalogs repeat reviews), so each distinct vector is kept
    once (24,580 reviews' and 1,545 instructors' there: 38 MB and 2.4 MB), as float32 up to
    ``HALF_FROM`` distinct vectors and as float16 past it (half the memory, but numpy converts
    float16 at several times the cost of a float32 product). float16
    scores are only near the stored ones: ``error`` bounds how near (the largest distance of a
    kept vector from its stored one, so by Cauchy-Schwarz the largest score difference for a
    normalised question), and ``semantic`` re-scores the best candidates from their stored
    vectors, widening until that bound proves no other row could be among them. float32 rows
    have ``error`` 0 and their scores are the stored vectors' own.
    """

    ids: NDArray[np.int64]
    # Row i's vector is distinct[rows[i]].
    rows: NDArray[np.int32]
    distinct: NDArray[np.float16] | NDArray[np.float32]
    error: float
    # Reviews only: each row's sentiment (NaN where it has none), for the sentiment filter.
    sentiment: NDArray[np.float32] | None

    def scores(self, target: NDArray[np.float32], positions: NDArray[np.intp]) -> NDArray[np.float32]:
        """The scores of the rows at ``positions`` (within ``error`` of their stored vectors'):
        each distinct vector they use scored once."""
        target32 = target.astype(np.float32, copy=False)
        used = self.rows[positions]
        if len(used) * 4 < len(self.distinct):
            # A few rows (a course's reviews): only their vectors, not every distinct one.
            few: NDArray[np.float32] = np.einsum(
                "ij,j->i", self.distinct[used].astype(np.float32, copy=False), target32
            )
            return few
        if self.distinct.dtype == np.float32:
            # einsum, as VectorTable scores: every row summed alike.
            exact: NDArray[np.float32] = np.einsum("ij,j->i", self.distinct, target32)[used]
            return exact
        of_distinct = np.empty(len(self.distinct), dtype=np.float32)
        for start in range(0, len(self.distinct), SCORE_CHUNK):
            chunk = self.distinct[start : start + SCORE_CHUNK].astype(np.float32)
            # einsum, not ``chunk @ target32``: every row summed alike (as above), and no BLAS
            # threads, which under load made this product slower (docs/performance.md).
            of_distinct[start : start + len(chunk)] = np.einsum("ij,j->i", chunk, target32)
        scored: NDArray[np.float32] = of_distinct[used]
        return scored

    @property
    def nbytes(self) -> int:
        extra = 0 if self.sentiment is None else self.sentiment.nbytes
        return int(self.ids.nbytes + self.rows.nbytes + self.distinct.nbytes + extra)


@dataclasses.dataclass(frozen=True)
class _PeopleSnapshot:
    version: int
    vectors: CompactVectors


_people: LRU[tuple[str, str], _PeopleSnapshot] = LRU(DATABASES_KEPT * 2)


async def compact_vectors(session: AsyncSession, kind: str, dimensions: int) -> CompactVectors:
    """The instructors' or the reviews' vectors of the session's database (``kind``:
    ``"instructors"`` or ``"reviews"``), as of that kind's vectors version; loaded at the first
    search of that kind after a change to its vectors, apart from the sections' (a sections
    search never pays it, nor a review search a new section's)."""
    key = (data_version.database_key(session), kind)
    version = await data_version.vectors_version(session, kind)
    writing = data_version.writing(session)
    snapshot = _people.get(key)
    if snapshot is not None and snapshot.version == version and not writing:
        return snapshot.vectors
    if writing:
        return await _load_compact(session, kind, dimensions)

    async def load_and_keep() -> CompactVectors:
        vectors = await _load_compact(session, kind, dimensions)
        _people.put(key, _PeopleSnapshot(version=version, vectors=vectors))
        return vectors

    return await _once((key[0], kind, version), load_and_keep)


def _half_error(exact: NDArray[np.float32], half: NDArray[np.float16]) -> float:
    """The largest distance of a float16 copy from its float32 vector."""
    return float(np.linalg.norm(exact - half.astype(np.float32), axis=1).max()) if len(exact) else 0.0


async def _load_compact(session: AsyncSession, kind: str, dimensions: int) -> CompactVectors:
    table: Any = Review if kind == "reviews" else Instructor
    columns = [table.id, table.embedding] + ([Review.sentiment] if kind == "reviews" else [])
    statement = select(*columns).where(table.embedding.is_not(None)).order_by(table.id)
    building = _CompactBuilder(dimensions, with_sentiment=kind == "reviews")
    result = await session.stream(statement.execution_options(yield_per=LOAD_CHUNK))
    async for chunk in result.partitions(LOAD_CHUNK):
        # In a worker thread: hashing 20,000 vectors would hold the event loop, and a
        # server's warm-up runs while it answers students.
        await anyio.to_thread.run_sync(building.take, chunk)
    return building.vectors()


class _CompactBuilder:
    """The :class:`CompactVectors` of rows taken chunk by chunk, in id order."""

    def __init__(self, dimensions: int, *, with_sentiment: bool) -> None:
        self.dimensions = dimensions
        self.with_sentiment = with_sentiment
        # Arrays, not lists: 8 bytes a row where a list holds a 28-byte int object (24 MB for the
        # ids and rows of 335,000 reviews, and as much again for their sentiments).
        self.ids = array.array("q")
        self.rows = array.array("i")
        self.sentiment = array.array("f")
        # A digest per distinct vector, not the vector: loading never holds every stored blob
        # (515 MB at --scale 67 if no review repeated), only what is kept.
        self.index_of: dict[bytes, int] = {}
        self.parts: list[Any] = []
        self.half = False
        self.error = 0.0

    def take(self, chunk: Sequence[Any]) -> None:
        dimensions, index_of = self.dimensions, self.index_of
        new: list[bytes] = []
        for row in chunk:
            blob = bytes(row[1])
            if len(blob) != dimensions * 4:
                raise ValueError(f"A stored vector has {len(blob) // 4} numbers, the model gives {dimensions}.")
            digest = hashlib.blake2b(blob, digest_size=16).digest()
            position = index_of.get(digest)
            if position is None:
                position = index_of[digest] = len(index_of)
                new.append(blob)
            self.ids.append(int(row[0]))
            self.rows.append(position)
            if self.with_sentiment:
                self.sentiment.append(float("nan") if row[2] is None else float(row[2]))
        if new:
            block = np.frombuffer(b"".join(new), dtype="<f4").reshape(len(new), dimensions)
            self.parts.append(block.astype(np.float16) if self.half else block)
            if self.half:
                self.error = max(self.error, _half_error(block, self.parts[-1]))
        if not self.half and len(index_of) > HALF_FROM:
            # From here on float16: what is held never grows past HALF_FROM float32 vectors.
            self.half = True
            exact = np.vstack(self.parts)
            self.parts = [exact.astype(np.float16)]
            self.error = _half_error(exact, self.parts[0])

    def vectors(self) -> CompactVectors:
        parts = self.parts
        distinct = np.vstack(parts) if parts else np.zeros((0, self.dimensions), dtype=np.float32)
        return CompactVectors(
            ids=np.frombuffer(self.ids, dtype=np.int64).copy(),
            rows=np.frombuffer(self.rows, dtype=np.int32).copy(),
            distinct=distinct,
            error=self.error,
            sentiment=np.frombuffer(self.sentiment, dtype=np.float32).copy() if self.with_sentiment else None,
        )
