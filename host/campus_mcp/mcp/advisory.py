"""The advisory on every planning tool result: the advisor message and the data sources.

It is in every answer of every planning tool, so every word of it is paid in each chat: a source
is its key, where it comes from, how often it refreshes and when it last did (what it covers is
the server instructions' table, once per chat, not once per answer), and the output schema of a
tool names it with one small ``$defs`` entry (:func:`with_advisory`).

Each data source reports its last refresh from the job-run records. Computing that is a few
queries, and every planning tool call needs it, so the times are cached for ten minutes
(seed 000: ``Catalog::Freshness`` keeps them ten minutes too). The cache is per process and
holds only public facts, so a second worker computing its own copy is harmless.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.registry import Registry
from campus_mcp.mcp.compact_schema import compact_schema
from campus_mcp.plugin.campus_time import campus_time_text
from campus_mcp.plugin.data_versions import when_bumped

CACHE_SECONDS = 600


class DataSourceStatus(BaseModel):
    key: str
    source: str
    refresh: str
    # No descriptions: the names say it, and every planning tool's schema carries them.
    last_refresh: str | None
    last_refresh_text: str | None = None
    last_refresh_by_term: dict[str, str] | None = None


class Advisory(BaseModel):
    message: str = Field(description="Tell the student this.")
    data_sources: list[DataSourceStatus]


ADVISORY_SCHEMA: dict[str, Any] = compact_schema(Advisory.model_json_schema())


def with_advisory(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The output schema of a planning tool: ``schema`` with the ``advisory`` key, which refers to
    one ``Advisory`` definition (with its ``DataSourceStatus``) in ``$defs``."""
    advisory = dict(ADVISORY_SCHEMA)
    defs = {**schema.get("$defs", {}), **advisory.pop("$defs", {}), "Advisory": advisory}
    return {
        **schema,
        "properties": {**schema.get("properties", {}), "advisory": {"$ref": "#/$defs/Advisory"}},
        "$defs": defs,
    }


@dataclasses.dataclass(frozen=True)
class AnswerAdvisory:
    """The advisory of one set of data sources, ready to put in an answer: its JSON object, shared
    by every answer until it expires, so nobody may change it."""

    value: dict[str, Any]


class FreshnessCache:
    """When each data source last refreshed, read at most once in ``CACHE_SECONDS`` per database.

    Keyed by the database as well as the source: one process may serve several campuses (the
    test suite does, and so may a command beside a server), and one campus's times must never
    be told about another's. The advisory built from those times is kept too (it was a large share
    of a cached answer's time on /api/mcp), until the oldest time it was built from expires.
    """

    def __init__(self) -> None:
        self._cached: dict[tuple[str, str], tuple[float, datetime | Mapping[str, datetime] | None]] = {}
        self._advisories: dict[tuple[str, str, tuple[str, ...]], tuple[float, AnswerAdvisory]] = {}

    def clear(self) -> None:
        self._cached.clear()
        self._advisories.clear()

    def read_at(self, registry: Registry, key: str) -> float | None:
        """When the cached time of ``key`` was read (monotonic seconds), None when it is not cached."""
        hit = self._cached.get((registry.settings.database_url, key))
        return None if hit is None else hit[0]

    async def advisory(
        self, registry: Registry, sessions: async_sessionmaker[AsyncSession], keys: Sequence[str]
    ) -> AnswerAdvisory:
        """The advisory of ``keys``: built, with a session, only when it is not cached or one of the
        times it was built from is older than ``CACHE_SECONDS``; else no database at all."""
        settings = registry.settings
        where = (settings.database_url, settings.advisor_text, tuple(keys))
        now = time.monotonic()
        hit = self._advisories.get(where)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        async with sessions() as session:
            built = await build_advisory(registry, session, keys, self)
        ready = AnswerAdvisory(value=built.model_dump(mode="json"))
        read = [at for key in keys if (at := self.read_at(registry, key)) is not None]
        self._advisories[where] = (min(read, default=now), ready)
        return ready

    async def last_refresh(
        self, registry: Registry, session: AsyncSession, key: str
    ) -> datetime | Mapping[str, datetime] | None:
        now = time.monotonic()
        where = (registry.settings.database_url, key)
        hit = self._cached.get(where)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        value = await registry.data_sources[key].last_refresh(session)
        self._cached[where] = (now, value)
        return value


freshness = FreshnessCache()


def forget_freshness() -> None:
    """Forget the cached freshness times: for a plugin whose data just changed in this process, so
    the next advisory says so at once instead of within the ten minutes (public)."""
    freshness.clear()


# A commit that bumps a data version (campus_mcp.plugin.data_versions) forgets them too.
when_bumped(forget_freshness)


async def answer_advisory(
    registry: Registry, sessions: async_sessionmaker[AsyncSession], keys: Sequence[str]
) -> AnswerAdvisory:
    """The advisory of an answer drawn from ``keys``, from the process's cache (:data:`freshness`)."""
    return await freshness.advisory(registry, sessions, keys)


def _campus(moment: datetime, zone: str) -> str:
    """A refresh time on the campus's clock (ISO 8601 with its offset), not UTC (issue 37, point 8)."""
    return moment.astimezone(ZoneInfo(zone)).isoformat()


async def build_advisory(
    registry: Registry, session: AsyncSession, keys: Sequence[str], cache: FreshnessCache | None = None
) -> Advisory:
    statuses: list[DataSourceStatus] = []
    zone = registry.settings.timezone
    times = cache if cache is not None else freshness
    for key in keys:
        source = registry.data_sources.get(key)
        if source is None:
            continue  # the plugin that reads this source is disabled
        value = await times.last_refresh(registry, session, key)
        by_term: dict[str, str] | None = None
        latest: datetime | None
        if isinstance(value, Mapping):
            by_term = {term: _campus(when, zone) for term, when in sorted(value.items())}
            latest = max(value.values()) if value else None
        else:
            latest = value
        statuses.append(
            DataSourceStatus(
                key=key,
                source=source.origin,
                refresh=source.refresh if source.refresh_words is None else source.refresh_words(latest),
                last_refresh=_campus(latest, zone) if latest else None,
                # Said once: a source whose refresh words carry the time (seats "as of ...") has no text twin.
                last_refresh_text=(
                    f"{campus_time_text(latest, zone)} ({zone} time)"
                    if latest and source.refresh_words is None
                    else None
                ),
                last_refresh_by_term=by_term,
            )
        )
    return Advisory(message=registry.settings.advisor_text, data_sources=statuses)
