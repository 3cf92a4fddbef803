"""The advisory on every planning tool result: the advisor message and the data sources.

Each data source reports its last refresh from the job-run records. Computing that is a few
queries, and every planning tool call needs it, so the times are cached for ten minutes
(seed 000: ``Catalog::Freshness`` keeps them ten minutes too). The cache is per process and
holds only public facts, so a second worker computing its own copy is harmless.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.registry import Registry

CACHE_SECONDS = 600


class DataSourceStatus(BaseModel):
    key: str = Field(description="The source's key.")
    covers: str = Field(description="What data the source gives.")
    source: str = Field(description="Where the data comes from.")
    refresh: str = Field(description="How often it is refreshed, in words.")
    last_refresh: str | None = Field(description="When it was last refreshed (ISO 8601), or null when it never was.")
    last_refresh_by_term: dict[str, str] | None = Field(
        default=None, description="For term sources: the last full refresh of each current and future term."
    )


class Advisory(BaseModel):
    message: str = Field(description="Tell the student this: confirm the plan with an advisor.")
    data_sources: list[DataSourceStatus]


ADVISORY_SCHEMA: dict[str, Any] = Advisory.model_json_schema()


class FreshnessCache:
    def __init__(self) -> None:
        self._cached: dict[str, tuple[float, datetime | Mapping[str, datetime] | None]] = {}

    def clear(self) -> None:
        self._cached.clear()

    async def last_refresh(
        self, registry: Registry, session: AsyncSession, key: str
    ) -> datetime | Mapping[str, datetime] | None:
        now = time.monotonic()
        hit = self._cached.get(key)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        value = await registry.data_sources[key].last_refresh(session)
        self._cached[key] = (now, value)
        return value


freshness = FreshnessCache()


async def build_advisory(registry: Registry, session: AsyncSession, keys: Sequence[str]) -> Advisory:
    statuses: list[DataSourceStatus] = []
    for key in keys:
        source = registry.data_sources.get(key)
        if source is None:
            continue  # the plugin that reads this source is disabled
        value = await freshness.last_refresh(registry, session, key)
        by_term: dict[str, str] | None = None
        latest: datetime | None
        if isinstance(value, Mapping):
            by_term = {term: when.isoformat() for term, when in sorted(value.items())}
            latest = max(value.values()) if value else None
        else:
            latest = value
        statuses.append(
            DataSourceStatus(
                key=key,
                covers=source.covers,
                source=source.origin,
                refresh=source.refresh,
                last_refresh=latest.isoformat() if latest else None,
                last_refresh_by_term=by_term,
            )
        )
    return Advisory(message=registry.settings.advisor_text, data_sources=statuses)
