"""The reference ranking of the search-by-meaning tests: every candidate's own stored vector
scored against the question exactly (float64), best first, ties by id.

The server scores in float32, and a float32 product of 384 numbers lands within about 1e-7 of
the exact score, on some CPUs above it and on others below: two reviews whose exact scores
differ by 1e-9 came in one order on an AMD machine and the other on an Intel one. So a page is
compared with the reference rank by rank on score, not on ids: at each rank the server's row
must score what the reference's row there scores, within ``TIE``, and so may be its near-twin.
``TIE`` is far below any difference a ranking means (scores that matter differ by 1e-3 and
more) and far above float32's rounding. A row within ``TIE`` of the relevance floor may be in or
out, which the total is allowed too.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from campus_catalog import semantic
from numpy.typing import NDArray

TIE = 1e-5


@dataclass(frozen=True)
class Ranking:
    """Every candidate's key, best first (ties by id), and its exact score."""

    order: list[Hashable]
    scores: dict[Hashable, float]

    def reaching(self, floor: float | None, margin: float) -> list[Hashable]:
        """The keys scoring at least ``floor - margin`` (every key without a floor)."""
        if floor is None:
            return list(self.order)
        return [key for key in self.order if self.scores[key] >= floor - margin]


def ranked(rows: Iterable[tuple[int, Hashable, bytes | None]], target: NDArray[np.float32]) -> Ranking:
    """The ranking of (id, key, stored vector) rows against ``target``; rows with no vector are
    no candidates."""
    exact = np.asarray(target, dtype=np.float64)
    scored = sorted(
        (-float(semantic.from_bytes(blob).astype(np.float64) @ exact), row_id, key)
        for row_id, key, blob in rows
        if blob
    )
    return Ranking(order=[key for _s, _id, key in scored], scores={key: -minus for minus, _id, key in scored})


def ranked_for(rows: Iterable[tuple[int, Hashable, bytes | None]], question: str) -> Ranking:
    return ranked(rows, semantic.embed_query(question))


def assert_page(
    listed: Sequence[Hashable],
    total: int,
    ranking: Ranking,
    *,
    offset: int = 0,
    limit: int,
    depth: int | None = None,
    floor: float | None = None,
) -> None:
    """That ``listed`` and ``total`` are the page at ``offset`` of ``limit`` of the ranking, as
    ranked down to ``depth`` rows of those reaching ``floor`` (see the module docstring)."""
    surely = ranking.reaching(floor, -TIE)
    maybe = ranking.reaching(floor, TIE)
    cap = len(ranking.order) if depth is None else depth
    assert min(len(surely), cap) <= total <= min(len(maybe), cap), (total, len(surely), len(maybe))
    assert len(listed) == max(0, min(offset + limit, total) - offset), (listed, total)
    assert len(set(listed)) == len(listed), listed
    for rank, key in enumerate(listed, start=offset):
        assert key in ranking.scores, f"{key!r} is no candidate"
        expected = maybe[rank]
        assert abs(ranking.scores[key] - ranking.scores[expected]) <= TIE, (
            f"rank {rank}: {key!r} scores {ranking.scores[key]:.9f}, "
            f"the reference's {expected!r} {ranking.scores[expected]:.9f}"
        )
