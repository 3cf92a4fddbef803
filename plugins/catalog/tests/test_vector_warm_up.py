"""A server loads the vectors of search by meaning when it starts, in the background
(``PluginInfo.warm_up``, ``vector_index.warm_up``): the first search of each kind after a start
loads nothing; a search arriving while a load is under way waits for that load instead of
starting a second one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from campus_catalog import data_version, semantic, vector_index
from campus_mcp.testing import CampusHarness

EVERY_KIND = ["catalog", "instructors", "reviews"]
# A question of its own per test: the answer cache would answer a question asked before.
QUESTIONS = iter(f"a class about {topic}" for topic in ("bridges", "robots", "jazz history", "oceans"))


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The snapshots loaded from the database, by kind, from here on (the real loads, counted)."""
    seen: list[str] = []
    load_compact = vector_index._load_compact
    load_catalog = vector_index._load_catalog

    async def counted_compact(session: Any, kind: str, dimensions: int) -> vector_index.CompactVectors:
        seen.append(kind)
        return await load_compact(session, kind, dimensions)

    async def counted_catalog(session: Any, version: int, dimensions: int) -> vector_index.CatalogVectors:
        seen.append("catalog")
        return await load_catalog(session, version, dimensions)

    monkeypatch.setattr(vector_index, "_load_compact", counted_compact)
    monkeypatch.setattr(vector_index, "_load_catalog", counted_catalog)
    vector_index.forget()
    yield seen
    vector_index.forget()


async def _database_key(campus: CampusHarness) -> str:
    async with campus.sessions() as session:
        return data_version.database_key(session)


def _loading(key: str, kind: str) -> bool:
    return any((database, of_kind) == (key, kind) for database, of_kind, _version in vector_index._loading)


async def _until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"after 30 s, still not: {what}")


async def _search_each_kind(campus: CampusHarness) -> None:
    question = next(QUESTIONS)
    for tool in ("search_sections", "search_reviews", "search_instructors"):
        result = await campus.call(tool, {"q": question, "semantic": True, "limit": 5}, scopes=["catalog"])
        assert not result.is_error, result.content


async def test_a_server_start_loads_every_snapshot_so_the_first_searches_load_nothing(
    demo_campus: CampusHarness, loads: list[str]
) -> None:
    key = await _database_key(demo_campus)
    assert vector_index.held(key) == []
    # The harness's client runs the app's lifespan, as `campus-mcp serve` does: the warm-up starts.
    async with demo_campus.rest() as client:
        assert (await client.get("/readyz")).status_code == 200
        await _until(lambda: vector_index.held(key) == EVERY_KIND, "every snapshot held")
        assert sorted(loads) == EVERY_KIND, "each snapshot loaded once"
        loads.clear()
        await _search_each_kind(demo_campus)
    assert loads == [], "the first search of each kind after the start loaded no snapshot"


async def test_a_search_during_a_load_waits_for_that_load(
    demo_campus: CampusHarness, loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = await _database_key(demo_campus)
    release = asyncio.Event()
    counted = vector_index._load_compact

    async def slow_compact(session: Any, kind: str, dimensions: int) -> vector_index.CompactVectors:
        await release.wait()  # a long load (the 335,000 reviews of --scale 67), held open by the test
        return await counted(session, kind, dimensions)

    monkeypatch.setattr(vector_index, "_load_compact", slow_compact)
    warming = asyncio.create_task(vector_index.warm_up(demo_campus.sessions, semantic.DIMENSIONS))
    await _until(lambda: _loading(key, "instructors"), "the warm-up's load of the instructors began")
    searching = asyncio.create_task(
        demo_campus.call("search_instructors", {"q": next(QUESTIONS), "semantic": True, "limit": 5}, scopes=["catalog"])
    )
    await _until(lambda: vector_index.waiting(key, "instructors") == 1, "the search waits for the load")
    release.set()
    result = await searching
    assert not result.is_error, result.content
    assert result.structured_content is not None and result.structured_content["instructors"]
    assert await warming == EVERY_KIND
    assert loads.count("instructors") == 1, loads


async def test_a_search_waiting_for_a_load_that_fails_loads_for_itself(
    demo_campus: CampusHarness, loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = await _database_key(demo_campus)
    release = asyncio.Event()
    counted = vector_index._load_compact
    failed: list[str] = []

    async def first_fails(session: Any, kind: str, dimensions: int) -> vector_index.CompactVectors:
        if not failed:
            failed.append(kind)
            await release.wait()
            raise RuntimeError("the database went away")
        return await counted(session, kind, dimensions)

    monkeypatch.setattr(vector_index, "_load_compact", first_fails)
    warming = asyncio.create_task(vector_index.warm_up(demo_campus.sessions, semantic.DIMENSIONS))
    await _until(lambda: bool(failed), "the warm-up's load began")
    searching = asyncio.create_task(
        demo_campus.call("search_instructors", {"q": next(QUESTIONS), "semantic": True, "limit": 5}, scopes=["catalog"])
    )
    await _until(lambda: vector_index.waiting(key, "instructors") == 1, "the search waits for the load")
    release.set()
    with pytest.raises(RuntimeError):
        await warming
    result = await searching
    assert not result.is_error, result.content
    assert loads == ["catalog", "instructors"], "the search loaded the instructors itself"
