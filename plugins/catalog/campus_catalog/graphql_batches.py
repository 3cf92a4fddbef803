"""GraphQL's links read per page, not per item (issue 30).

graphql-core resolves the items of a list side by side, so every ``course`` of a page of sections
asks at once; a DataLoader gathers those asks and reads them in one go (``courses.get_courses``),
and one course asked again (every section of an ``offered_sections`` page links back to its
course) is read once per query. ``offered_sections`` likewise, one loader per distinct set of
arguments (``offered.offered_pages``). Before, a query at the cost limit made about 3,200
``get_course`` calls, each two statements, and held a database connection for seconds.

The answers are the ones ``get_course`` and ``search_sections`` give, as their JSON; a code of no
course gets ``get_course``'s error, on that field only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from campus_mcp import Settings
from sqlalchemy.ext.asyncio import AsyncSession
from strawberry.dataloader import DataLoader

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import courses, offered
from campus_catalog.schemas import SectionSearch

JSON = dict[str, Any]


class Batches:
    """The loaders of one query: they share its session and take turns on it with ``lock``."""

    def __init__(self, session: AsyncSession, settings: Settings, catalog: CatalogSettings, lock: asyncio.Lock) -> None:
        self._session, self._settings, self._catalog, self._lock = session, settings, catalog, lock
        self._courses: DataLoader[str, JSON] = DataLoader(self._load_courses)
        self._offered: dict[tuple[str | None, int, int, bool], DataLoader[str, JSON]] = {}

    def course(self, code: str) -> Awaitable[JSON]:
        """The JSON of ``get_course`` for a normalized code (``CourseLookup``'s)."""
        return self._courses.load(code)

    def offered_sections(self, code: str, query: SectionSearch) -> Awaitable[JSON]:
        """The JSON of ``search_sections`` for the course ``code`` with ``query``'s term, page and
        open_only (the only arguments the link has)."""
        key = (query.term, query.offset, query.limit, query.open_only)
        loader = self._offered.get(key)
        if loader is None:

            async def load(codes: list[str]) -> list[JSON | BaseException]:
                async with self._lock:
                    pages = await offered.offered_pages(self._session, codes, query, self._settings)
                return [
                    page if isinstance(page, BaseException) else page.model_dump(mode="json")
                    for page in map(pages.__getitem__, codes)
                ]

            loader = self._offered[key] = DataLoader(load)
        return loader.load(code)

    async def _load_courses(self, codes: list[str]) -> list[JSON | BaseException]:
        async with self._lock:
            found = await courses.get_courses(self._session, codes, self._settings, self._catalog)
        return [
            found[code].model_dump(mode="json") if code in found else courses.course_not_found(code) for code in codes
        ]
