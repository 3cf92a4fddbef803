"""The answer cache: a second identical question is answered from the cache (it does not see a
change made behind the catalog's back), and any committed catalog change, an import included,
bumps the data version so the next answer is read again.

"Behind the catalog's back" is a raw SQL update on a plain connection: no ORM session, so no
data-version bump. A real change (an import, a section refresh) always goes through a session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from campus_catalog import data_version
from campus_catalog.models import Section
from campus_catalog.sources.banner_sync import import_banner_file
from campus_mcp.testing import CampusFactory, CampusHarness, private_redis
from sqlalchemy import update

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
CRN, TERM = "45405", "202131"  # CSCE 110-500: 21 seats, 21 enrolled in the fixture


async def _campus(campus_factory: CampusFactory, redis_url: str = "", **catalog: Any) -> CampusHarness:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the fixtures are not in {FIXTURES} (../shared/fixtures of the project root)")
    campus = await campus_factory(
        plugins=["catalog"], plugin_settings={"catalog": catalog} if catalog else None, redis_url=redis_url
    )
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    return campus


async def _seats(campus: CampusHarness) -> int:
    result = await campus.call("get_section", {"crn": CRN, "term": TERM})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    seats: int = result.structured_content["seats"]["available"]
    return seats


async def _set_seats_behind_the_catalogs_back(campus: CampusHarness, seats: int) -> None:
    async with campus.deployment.engine.begin() as connection:
        await connection.execute(update(Section).where(Section.crn == CRN).values(seats_available=seats))


async def _version(campus: CampusHarness) -> int:
    async with campus.sessions() as session:
        return await data_version.current(session)


async def test_a_hit_after_a_miss_and_a_miss_after_the_data_changes(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    imported = await _version(campus)
    assert imported >= 1, "the import committed catalog rows, so it bumped the data version"
    assert await _seats(campus) == 0  # a miss: read from the database, then kept

    await _set_seats_behind_the_catalogs_back(campus, 7)
    assert await _seats(campus) == 0, "the second identical call is answered from the cache"
    async with campus.rest() as client:
        response = await client.get(f"/api/v1/catalog/sections/{CRN}", params={"term": TERM})
    assert response.status_code == 200
    assert response.json()["seats"]["available"] == 0, "the REST twin shares the tool's cached answer"

    # Any committed change to catalog rows through a session bumps the version: here another
    # section's seats, as the seat refresh writes them.
    async with campus.sessions() as session:
        await session.execute(update(Section).where(Section.crn != CRN).values(seats_available=1))
        await session.commit()
    assert await _version(campus) == imported + 1
    assert await _seats(campus) == 7, "a new data version is a miss: the answer is read again"

    # An import bumps it too (and puts the fixture's 0 seats back).
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    assert await _version(campus) == imported + 2
    assert await _seats(campus) == 0


async def test_a_rolled_back_change_bumps_nothing_and_the_cache_can_be_turned_off(
    campus_factory: CampusFactory,
) -> None:
    campus = await _campus(campus_factory, answer_cache_entries=0)
    before = await _version(campus)
    async with campus.sessions() as session:
        await session.execute(update(Section).values(seats_available=3))
        await session.rollback()
    assert await _version(campus) == before

    assert await _seats(campus) == 0
    await _set_seats_behind_the_catalogs_back(campus, 7)
    assert await _seats(campus) == 7, "with the cache off, every call reads the database"


async def test_with_redis_configured_the_answers_are_kept_in_redis(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    with private_redis(tmp_path / "redis") as (redis_url, _redis):
        campus = await _campus(campus_factory, redis_url=redis_url)
        assert await _seats(campus) == 0
        await _set_seats_behind_the_catalogs_back(campus, 7)
        assert await _seats(campus) == 0, "answered from Redis"

        from redis.asyncio import Redis

        client = Redis.from_url(redis_url)
        try:
            keys = await client.keys("campus-mcp:answer:get_section:*")
        finally:
            await client.aclose()
        assert len(keys) == 1
