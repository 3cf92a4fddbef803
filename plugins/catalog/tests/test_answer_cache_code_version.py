"""The answer cache's key holds the code version: an answer a previous release (or build) left
in the shared store is not served by the next one, whose answer may have another shape or be
computed differently. Redis keeps entries a day, far longer than a deploy takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from campus_catalog import answers
from campus_mcp.testing import CampusFactory, private_redis
from pydantic import BaseModel

from .test_answer_cache import _campus, _seats, _set_seats_behind_the_catalogs_back


async def test_a_new_release_does_not_read_the_answers_an_older_one_left_in_redis(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with private_redis(tmp_path / "redis") as (redis_url, _redis):
        campus = await _campus(campus_factory, redis_url=redis_url)
        assert await _seats(campus) == 0
        await _set_seats_behind_the_catalogs_back(campus, 7)
        assert await _seats(campus) == 0, "the same release answers from Redis"

        # The next deploy: same database, same data version, same Redis; other code.
        monkeypatch.setattr(answers, "RELEASE", answers.RELEASE + " (the next build)")
        assert await _seats(campus) == 7, "the new release computes its answer, not the old one's"


def test_the_code_version_changes_with_the_shape_of_the_answer() -> None:
    class Before(BaseModel):
        seats: int

    class After(BaseModel):
        seats: int
        waitlist: int = 0

    # An entry of the old shape still validates as the new model, its new field made up: only
    # the key can keep it from being served.
    assert After.model_validate_json(Before(seats=3).model_dump_json()) == After(seats=3, waitlist=0)
    assert answers.code_version(Before) == answers.code_version(Before)
    assert answers.code_version(Before) != answers.code_version(After)
    assert answers.RELEASE in answers.code_version(After)
