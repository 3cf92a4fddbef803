"""Reviews of the demo campus, their sentence-built vectors, the instructors' ratings and vectors."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np
from sqlalchemy import bindparam, update

from campus_catalog import models as m
from campus_catalog import semantic
from campus_catalog.demo import people
from campus_catalog.demo.loader import CHUNK, DemoLoader, table
from campus_catalog.demo.vectors import demo_vectors

REVIEWS = 5000  # at scale 1


class _SentenceVectors:
    """The model's vector of each review sentence, computed once; a review is their mean."""

    def __init__(self) -> None:
        pools = people.PRAISE + people.COMPLAINT + people.MIXED + people.ADVICE
        matrix = np.vstack([semantic.from_bytes(b) for b in demo_vectors(pools)])
        self.index = {sentence: i for i, sentence in enumerate(pools)}
        self.matrix = matrix
        self.cache: dict[tuple[int, ...], bytes] = {}

    def review(self, sentences: Sequence[str]) -> bytes:
        key = tuple(self.index[s] for s in sentences)
        blob = self.cache.get(key)
        if blob is None:
            mean = self.matrix[list(key)].mean(axis=0)
            blob = semantic.to_bytes(mean / np.linalg.norm(mean))
            self.cache[key] = blob
        return blob


def _review_text(rng: random.Random, overall: int) -> list[str]:
    if overall >= 4:
        sentences = rng.sample(people.PRAISE, rng.choice((1, 2, 2, 3)))
    elif overall <= 2:
        sentences = rng.sample(people.COMPLAINT, rng.choice((1, 2, 2, 3)))
    else:
        sentences = [rng.choice(people.MIXED)]
        if rng.random() < 0.5:
            sentences.append(rng.choice(people.PRAISE if rng.random() < 0.5 else people.COMPLAINT))
    if rng.random() < 0.3:
        sentences.append(rng.choice(people.ADVICE))
    return sentences


def _tags(rng: random.Random, overall: int) -> list[str]:
    pool = people.PRAISE_TAGS if overall >= 4 else people.COMPLAINT_TAGS if overall <= 2 else people.NEUTRAL_TAGS
    tags = rng.sample(pool, rng.randint(0, 2))
    if rng.random() < 0.3:
        tags.append(rng.choice(people.NEUTRAL_TAGS))
    return list(dict.fromkeys(tags))


async def load_reviews(loader: DemoLoader) -> None:
    rng = loader.rng
    vectors = _SentenceVectors()
    course_code = {c.id: c.code for c in loader.courses}
    instructors = sorted(loader.taught)
    # Some instructors are loved, some are not, and most are in between; a tenth have no reviews.
    reviewed = [i for i in instructors if rng.random() > 0.1]
    quality = {i: min(5.0, max(1.0, rng.gauss(3.6, 0.9))) for i in reviewed}
    hardness = {i: min(5.0, max(1.0, rng.gauss(3.0, 0.8))) for i in reviewed}
    popularity = [rng.paretovariate(1.6) for _ in reviewed]
    # Cumulative once: weights= would add them all up again for each of a million reviews.
    cumulative = list(itertools.accumulate(popularity))
    summary: dict[int, list[tuple[int, int, bool | None, list[str]]]] = {}
    rows: list[dict[str, Any]] = []
    total = REVIEWS * loader.scale
    for review_id in range(1, total + 1):
        instructor = rng.choices(reviewed, cum_weights=cumulative)[0]
        overall = int(min(5, max(1, round(rng.gauss(quality[instructor], 0.9)))))
        difficulty = int(min(5, max(1, round(rng.gauss(hardness[instructor], 0.9)))))
        would = None if rng.random() < 0.15 else overall >= 3 and rng.random() < 0.9
        sentences = _review_text(rng, overall)
        tags = _tags(rng, overall)
        course = rng.choice(sorted(loader.taught[instructor]))
        summary.setdefault(instructor, []).append((overall, difficulty, would, tags))
        rows.append(
            {
                "id": review_id,
                "instructor_id": instructor,
                "course_code": course_code[course],
                "posted_on": loader.today - timedelta(days=rng.randint(3, 3 * 365)),
                "overall": float(overall),
                "difficulty": float(difficulty),
                "would_take_again": would,
                "grade": rng.choice(people.GRADES),
                "tags": tags,
                "text": " ".join(sentences),
                "sentiment": round((overall - 3) / 2, 2),
                "embedding": vectors.review(sentences),
            }
        )
        if len(rows) >= CHUNK:
            await loader.insert(table(m.Review), rows)
            rows.clear()
    await loader.insert(table(m.Review), rows)

    ratings = []
    for instructor, items in summary.items():
        answered = [w for _, _, w, _ in items if w is not None]
        tag_counts: dict[str, int] = {}
        for *_, tags in items:
            for tag in tags:
                tag_counts[tag] = tag_counts.get(tag, 0) + 1
        ratings.append(
            {
                "instructor_id": instructor,
                "overall": round(sum(o for o, *_ in items) / len(items), 1),
                "difficulty": round(sum(d for _, d, *_ in items) / len(items), 1),
                "would_take_again_percent": round(100 * sum(answered) / len(answered), 1) if answered else None,
                "rating_count": len(items),
                "distribution": {str(k): sum(1 for o, *_ in items if o == k) for k in range(1, 6)},
                "tag_counts": dict(sorted(tag_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
                "fetched_at": loader.now - timedelta(days=1, hours=3),
            }
        )
    await loader.insert(table(m.InstructorRating), ratings)


async def update_instructor_vectors(loader: DemoLoader) -> None:
    """An instructor means what they teach: the mean of their courses' vectors."""
    blobs = {c.id: c.embedding for c in loader.courses}
    instructors = table(m.Instructor)
    updates = [
        {"b_id": instructor, "b_embedding": semantic.mean_vector([blobs[c] for c in sorted(courses)])}
        for instructor, courses in loader.taught.items()
    ]
    statement = (
        update(instructors).where(instructors.c.id == bindparam("b_id")).values(embedding=bindparam("b_embedding"))
    )
    for start in range(0, len(updates), CHUNK):
        await loader.session.execute(statement, updates[start : start + CHUNK])
