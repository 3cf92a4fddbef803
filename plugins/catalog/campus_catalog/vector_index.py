"""The vectors a search by meaning scores, held in process as matrices, keyed by the catalog's data version.

A search for sections by meaning scores every course of the catalog (its untitled sections share
its vector) and every section with a title of its own (a topics course's section has its own
vector). Reading those vectors for each search cost two statements and a 1.5 KB blob per course;
they change only when catalog data changes, which bumps the catalog's data version
(``data_version.py``) in the same transaction. So each process keeps them here, one snapshot per
database, and a search reads only the version (one row) to know its snapshot is current: right
after an import or a refresh that writes vectors, in this process or another sharing the
database, the next search reloads. Scoring a snapshot is one matrix product (microseconds for a
catalog's courses), so what a search costs no longer grows with the number of sections.

The version is read *before* the vectors (or was, by the call's answer cache, in the same
transaction): a snapshot may then be newer than its version says (reloaded once more at the next
search), never older.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import select

from campus_catalog import data_version
from campus_catalog.models import Course, Section

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
    """One database's vectors at one data version."""

    version: int
    courses: VectorTable
    titled_sections: VectorTable


_snapshots: OrderedDict[str, CatalogVectors] = OrderedDict()


def _database(session: AsyncSession) -> str:
    # The URL names the database (two campuses in one process are two URLs); kept in memory only.
    return session.get_bind().engine.url.render_as_string(hide_password=True)


async def catalog_vectors(session: AsyncSession, dimensions: int) -> CatalogVectors:
    """The vectors of the session's database, as of its current catalog data version
    (``dimensions``: the model's, ``semantic.DIMENSIONS``)."""
    key = _database(session)
    # A tool call's answer cache has read the version already in this transaction (no query then).
    known = data_version.known(session)
    version = known if known is not None else await data_version.current(session)
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
