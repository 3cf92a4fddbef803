"""The model's vectors of the demo campus's texts, computed ahead and shipped beside this module.

Why: the model needs tens of milliseconds of CPU for one course description on this kind of machine, so
the 200-odd texts of the demo campus cost half a minute, while every test session and every
``campus-mcp demo`` needs them. They are a pure function of the text and the model, so they are
computed once by ``python -m campus_catalog.demo.vectors`` and stored in ``vectors.npz``, keyed
by a hash of the model name and the text. A text that is not in the file (an edited course
description) is embedded live, so the file can only make a load faster, never wrong;
``test_demo.py`` checks that stored vectors equal what the model gives now.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from campus_catalog import semantic

VECTORS_FILE = Path(__file__).with_name("vectors.npz")


def text_key(text: str) -> str:
    return hashlib.sha256(f"{semantic.MODEL_NAME}\n{text}".encode()).hexdigest()[:32]


@cache
def _shipped() -> dict[str, bytes]:
    if not VECTORS_FILE.exists():
        return {}
    with np.load(VECTORS_FILE) as data:
        keys = [str(k) for k in data["keys"]]
        matrix = data["vectors"].astype("<f4")
    return {key: matrix[i].tobytes() for i, key in enumerate(keys)}


def demo_vectors(texts: Sequence[str]) -> list[bytes]:
    """Stored vectors for the texts: shipped ones where the file has them, the model for the rest."""
    shipped = _shipped()
    missing = list(dict.fromkeys(t for t in texts if text_key(t) not in shipped))
    live = dict(zip(missing, semantic.embed_unique(missing), strict=True))
    return [shipped.get(text_key(t)) or live[t] for t in texts]


def all_demo_texts() -> list[str]:
    """Every text the demo generator embeds: course texts and review sentences."""
    from campus_catalog.demo import people
    from campus_catalog.demo.courses import COURSES, SUBJECTS

    courses = [
        semantic.course_text(title, description, SUBJECTS[subject][0])
        for subject, rows in COURSES.items()
        for number, title, description, _ in rows
    ]
    return courses + list(people.PRAISE + people.COMPLAINT + people.MIXED + people.ADVICE)


def build() -> int:
    """Recompute the shipped file from the model (run after editing a demo text)."""
    texts = list(dict.fromkeys(all_demo_texts()))
    matrix = semantic.embed(texts)
    np.savez_compressed(VECTORS_FILE, keys=np.array([text_key(t) for t in texts]), vectors=matrix)
    _shipped.cache_clear()
    return len(texts)


if __name__ == "__main__":
    print(f"Embedded {build()} demo texts into {VECTORS_FILE.name}.")
