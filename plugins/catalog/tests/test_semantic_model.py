"""The embedding model itself: it loads offline, gives normalised vectors, and ranks by meaning."""

from __future__ import annotations

import numpy as np
import pytest
from campus_catalog import semantic
from campus_mcp import InvalidInput

COURSES = [
    semantic.course_text("Computer Science I", "Problem solving and first programs in Python."),
    semantic.course_text("Investments", "Equities, bonds and how the stock market prices them."),
    semantic.course_text("Cell Biology", "The structure and function of the living cell."),
    semantic.course_text("American History", "The United States from the colonies to 1877."),
]


def test_vectors_are_normalised_float32_and_round_trip_through_bytes() -> None:
    matrix = semantic.embed(COURSES)
    assert matrix.shape == (4, semantic.DIMENSIONS)
    assert matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    blob = semantic.to_bytes(matrix[1])
    assert len(blob) == semantic.DIMENSIONS * 4
    assert np.array_equal(semantic.from_bytes(blob), matrix[1])


def test_a_students_words_find_the_course_they_mean() -> None:
    matrix = semantic.embed(COURSES)
    for question, expected in [
        ("learn to code", 0),
        ("a class about the stock market", 1),
        ("how cells work", 2),
        ("the civil war", 3),
    ]:
        scores = matrix @ semantic.embed_query(question)
        assert int(np.argmax(scores)) == expected, (question, scores)


def test_embed_unique_embeds_each_distinct_text_once_and_keeps_order() -> None:
    blobs = semantic.embed_unique([COURSES[0], COURSES[1], COURSES[0]])
    assert blobs[0] == blobs[2]
    assert blobs[0] != blobs[1]


def test_mean_vector_is_normalised() -> None:
    blobs = semantic.embed_unique(COURSES[:2])
    mean = semantic.mean_vector(blobs)
    assert mean is not None
    assert np.isclose(np.linalg.norm(semantic.from_bytes(mean)), 1.0, atol=1e-5)
    assert semantic.mean_vector([]) is None


def test_a_stored_vector_of_the_wrong_length_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="384"):
        semantic.from_bytes(b"\0" * 16)


def test_the_allowance_refuses_a_second_search_with_the_reason() -> None:
    with semantic.semantic_allowance(1, "GraphQL allows one search by meaning per query.") as allowance:
        allowance.spend()
        with pytest.raises(InvalidInput, match="one search by meaning per query"):
            allowance.spend()
    assert allowance.spent == 1
