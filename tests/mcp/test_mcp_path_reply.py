"""The 2026-07-28 reply's JSON (campus_mcp.mcp.fast_call.python_json): pydantic's writer only where its
bytes are json.dumps's, over floats of every magnitude, both exponent letters' neighbourhoods, and
text that looks like numbers (issue 16: one search for a digit before an exponent, not two)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from campus_mcp.mcp import fast_call


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


def floats() -> list[float]:
    rng = random.Random(16)
    found = [0.0, -0.0, 5e-324, 1.8e308]
    for exponent in range(-320, 309):
        found.extend((10.0**exponent, -rng.random() * 10.0**exponent, rng.random() * 10.0**exponent))
    return [value for value in found if value == value and abs(value) != float("inf")]


@pytest.mark.parametrize("chunk", range(8))
def test_python_json_is_json_dumps_for_floats_of_every_magnitude(chunk: int) -> None:
    values = floats()[chunk::8]
    for value in values:
        assert fast_call.python_json([value]) == dumps([value]), value
        assert fast_call.python_json({"x": value, "s": "COMP 1000"}) == dumps({"x": value, "s": "COMP 1000"})
    assert fast_call.python_json(values) == dumps(values)


@pytest.mark.parametrize(
    "value",
    [
        {"code": "COMP 1000E", "room": "2E-106", "crn": "1e5"},  # exponent-like text: written either way, the same
        {"title": "Phase 2E of the lab", "n": 3},
        ["10E", "10e", 10, 1.5],
        {"big": 12345678901234567890123, "small": -7},
    ],
)
def test_python_json_text_that_looks_like_numbers(value: Any) -> None:
    assert fast_call.python_json(value) == dumps(value)


def test_the_translation_marks_both_exponent_letters() -> None:
    for text in (b"1E5", b"9e-7", b"0E0"):
        assert b"0e" in text.translate(fast_call.DIGITS_AS_ZERO)
    assert b"0e" not in b"COMP e1 E".translate(fast_call.DIGITS_AS_ZERO)
