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
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import select

from campus_catalog import data_version
from campus_catalog.models import Course, Instructor, Review, Section

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

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


_snapshots: OrderedDict[str, CatalogVectors] = OrderedDict()


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
        _snapshots.move_to_end(key)
        return snapshot
    courses = await session.execute(select(Course.id, Course.embedding).where(Course.embedding.is_not(None)))
    courses_table = VectorTable.of(courses, dimensions)
    titled = await session.execute(
        select(Section.id, Section.embedding).where(Section.title.is_not(None), Section.embedding.is_not(None))
    )
    snapshot = CatalogVectors(
        version=version, courses=courses_table, titled_sections=VectorTable.of(titled, dimensions)
    )
    if writing:
        return snapshot
    # Two searches may load the same version at once; either snapshot is right, the last one stays.
    _snapshots[key] = snapshot
    _snapshots.move_to_end(key)
    while len(_snapshots) > DATABASES_KEPT:
        _snapshots.popitem(last=False)
    return snapshot


def forget() -> None:
    """Drop every snapshot (tests that measure a cold search)."""
    _snapshots.clear()
    _people.clear()


# ----------------------------------------------------------------------------- instructors, reviews

# Scoring rows in chunks of this many distinct vectors keeps the float32 copy a search makes small.
SCORE_CHUNK = 8192
# Past this many distinct vectors (56 MB as float32) a kind's are held as float16.
HALF_FROM = 40_000
# Rows streamed per round trip while a snapshot loads, so loading never holds every blob at once.
LOAD_CHUNK = 20_000


@dataclasses.dataclass(frozen=True)
class CompactVectors:
    """The vectors of one kind's rows, held compactly: each distinct vector once.

    Instructors' and reviews' vectors are many (335,000 reviews and 20,100 instructors at
    ``--scale 67``: 515 MB and 31 MB as float32) and repeat (an instructor's vector is the mean
    of the courses they teach; copied catalogs repeat reviews), so each distinct vector is kept
    once (24,580 reviews' and 1,545 instructors' there: 38 MB and 2.4 MB), as float32 up to
    ``HALF_FROM`` distinct vectors and as float16 past it (half the memory, but numpy converts
    float16 at ~5x the cost of a float32 product: 47-75 ms against 10 for 24,580 rows). float16
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
            of_distinct[start : start + len(chunk)] = chunk @ target32
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


_people: OrderedDict[tuple[str, str], _PeopleSnapshot] = OrderedDict()


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
        _people.move_to_end(key)
        return snapshot.vectors
    vectors = await _load_compact(session, kind, dimensions)
    if writing:
        return vectors
    _people[key] = _PeopleSnapshot(version=version, vectors=vectors)
    _people.move_to_end(key)
    while len(_people) > DATABASES_KEPT * 2:
        _people.popitem(last=False)
    return vectors


def _half_error(exact: NDArray[np.float32], half: NDArray[np.float16]) -> float:
    """The largest distance of a float16 copy from its float32 vector."""
    return float(np.linalg.norm(exact - half.astype(np.float32), axis=1).max()) if len(exact) else 0.0


async def _load_compact(session: AsyncSession, kind: str, dimensions: int) -> CompactVectors:
    table: Any = Review if kind == "reviews" else Instructor
    columns = [table.id, table.embedding] + ([Review.sentiment] if kind == "reviews" else [])
    statement = select(*columns).where(table.embedding.is_not(None)).order_by(table.id)
    ids: list[int] = []
    rows: list[int] = []
    sentiment: list[float] = []
    # A digest per distinct vector, not the vector: loading never holds every stored blob (515 MB
    # at --scale 67 if no review repeated), only what is kept.
    index_of: dict[bytes, int] = {}
    parts: list[Any] = []
    half = False
    error = 0.0
    result = await session.stream(statement.execution_options(yield_per=LOAD_CHUNK))
    async for chunk in result.partitions(LOAD_CHUNK):
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
            ids.append(int(row[0]))
            rows.append(position)
            if kind == "reviews":
                sentiment.append(float("nan") if row[2] is None else float(row[2]))
        if new:
            block = np.frombuffer(b"".join(new), dtype="<f4").reshape(len(new), dimensions)
            parts.append(block.astype(np.float16) if half else block)
            if half:
                error = max(error, _half_error(block, parts[-1]))
        if not half and len(index_of) > HALF_FROM:
            # From here on float16: what is held never grows past HALF_FROM float32 vectors.
            half = True
            exact = np.vstack(parts)
            parts = [exact.astype(np.float16)]
            error = _half_error(exact, parts[0])
    distinct = np.vstack(parts) if parts else np.zeros((0, dimensions), dtype=np.float32)
    return CompactVectors(
        ids=np.asarray(ids, dtype=np.int64),
        rows=np.asarray(rows, dtype=np.int32),
        distinct=distinct,
        error=error,
        sentiment=np.asarray(sentiment, dtype=np.float32) if kind == "reviews" else None,
    )
