"""The advisory's freshness times are cached per database, never shared between two campuses served
by one process (a shared cache told one campus the other's finals had stopped refreshing)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from campus_mcp.mcp.advisory import FreshnessCache


class Source:
    def __init__(self, when: datetime | None) -> None:
        self.when = when
        self.reads = 0

    async def last_refresh(self, _session: Any) -> datetime | None:
        self.reads += 1
        return self.when


def campus(url: str, source: Source) -> Any:
    return SimpleNamespace(settings=SimpleNamespace(database_url=url), data_sources={"finals": source})


async def test_two_campuses_in_one_process_each_get_their_own_times() -> None:
    cache = FreshnessCache()
    loaded = Source(datetime(2026, 11, 30, 12, tzinfo=UTC))
    never = Source(None)
    first = campus("sqlite+aiosqlite:///one.db", loaded)
    second = campus("sqlite+aiosqlite:///two.db", never)

    assert await cache.last_refresh(first, None, "finals") == loaded.when  # type: ignore[arg-type]
    assert await cache.last_refresh(second, None, "finals") is None  # type: ignore[arg-type]
    # Within the ten minutes each campus reads its own source once.
    assert await cache.last_refresh(first, None, "finals") == loaded.when  # type: ignore[arg-type]
    assert (loaded.reads, never.reads) == (1, 1)
