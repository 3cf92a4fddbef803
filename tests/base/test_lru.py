"""The one bounded cache of the host and its plugins (campus_mcp.LRU)."""

from __future__ import annotations

import pytest
from campus_mcp import LRU


def test_the_entry_used_longest_ago_goes_first() -> None:
    kept: LRU[str, int] = LRU(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now the newest
    kept.put("c", 3)
    assert "b" not in kept and kept.get("a") == 1 and kept.get("c") == 3
    assert len(kept) == 2
    assert kept.get("b", 0) == 0


def test_a_key_that_cannot_be_hashed_raises_as_a_dict_would() -> None:
    kept: LRU[object, int] = LRU(1)
    with pytest.raises(TypeError):
        kept.get([1])


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one entry"):
        LRU(0)
