"""One student's reads from Canvas in one call: their connection, a live token, a short cache.

:func:`canvas_reader` gives a :class:`CanvasReader` for a student, or the answer that tells them to
connect (never connected) or to connect again (Canvas no longer takes the token). A read is served
from the cache when the same student asked the same of the same connection within
``cache_seconds``; otherwise the token is made ready once per call (refreshed when it ends within
``REFRESH_MARGIN``) and the request goes out. A ``401`` with ``WWW-Authenticate`` (the token is
invalid, expired or revoked) refreshes once; a refused refresh forgets the tokens and asks for a
reconnection. Database sessions are short and never held while Canvas answers.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, NoReturn, TypeVar

import httpx
from campus_mcp import LRU, Settings, utcnow

from campus_canvas import oauth
from campus_canvas.canvas_http import CanvasHttp, Page, Params, TokenRejected
from campus_canvas.connections import NotConnected, Reconnect, Sessions, mark_lost, save_refresh, tokens_of
from campus_canvas.demo_canvas import demo_tokens, demo_transport
from campus_canvas.models import CanvasConnection
from campus_canvas.settings import CanvasSettings, canvas_origin, is_demo

REFRESH_MARGIN = timedelta(minutes=5)
CACHE_ENTRIES = 2_000
T = TypeVar("T")

# (student, Canvas user, connected at, what) -> (until, answer): per process, per connection, so a
# reconnection (as anyone) never sees what an earlier connection read.
_cache: LRU[tuple[Any, ...], tuple[float, Any]] = LRU(CACHE_ENTRIES)


def open_client(plugin_settings: CanvasSettings) -> httpx.AsyncClient:
    """An HTTP client for the family's Canvas: the demo Canvas's transport in demo mode."""
    transport = demo_transport() if is_demo(plugin_settings) else None
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        timeout=httpx.Timeout(plugin_settings.timeout_seconds),
        headers={"Accept": "application/json", "Accept-Encoding": "gzip", "User-Agent": "campus-mcp-canvas"},
    )


class CanvasReader:
    def __init__(
        self,
        sessions: Sessions,
        settings: Settings,
        plugin_settings: CanvasSettings,
        row: CanvasConnection,
        client: httpx.AsyncClient,
    ) -> None:
        self.sessions = sessions
        self.settings = settings
        self.plugin_settings = plugin_settings
        self.student_id = row.student_id
        self.origin = canvas_origin(plugin_settings)
        self._connection = (row.student_id, row.canvas_user_id, row.connected_at.isoformat())
        self._client = client
        self._http: CanvasHttp | None = None
        self._refresh_token: str | None = None
        self._refreshed = False
        self.requests = 0

    async def list(self, path: str, params: Params = ()) -> Page:
        found: Page = await self._cached(("list", path, tuple(params)), lambda http: http.get_list(path, params))
        return found

    async def json(self, path: str, params: Params = ()) -> Any:
        return await self._cached(("json", path, tuple(params)), lambda http: http.get_json(path, params))

    async def _cached(self, what: tuple[Any, ...], fetch: Callable[[CanvasHttp], Awaitable[T]]) -> T:
        key = (*self._connection, *what)
        seconds = self.plugin_settings.cache_seconds
        kept = _cache.get(key) if seconds else None
        if kept is not None and kept[0] > time.monotonic():
            answer: T = kept[1]
            return answer
        answer = await self._fetch(fetch)
        if seconds:
            _cache.put(key, (time.monotonic() + seconds, answer))
        return answer

    async def _fetch(self, fetch: Callable[[CanvasHttp], Awaitable[T]]) -> T:
        http = await self._ready()
        try:
            return await fetch(http)
        except TokenRejected:
            # The access token died early (revoked, or Canvas's clock): one refresh, one retry.
            if self._refreshed or self._refresh_token is None:
                await self._lose()
            await self._refresh()
            try:
                return await fetch(self._http_with_current_token())
            except TokenRejected:
                await self._lose()
        finally:
            if self._http is not None:
                self.requests = self._http.requests

    async def _ready(self) -> CanvasHttp:
        if self._http is not None:
            return self._http
        async with self.sessions() as session:
            row = await session.get(CanvasConnection, self.student_id)
            if row is None:
                raise NotConnected(self.settings)
            tokens = demo_tokens(row) if row.demo else tokens_of(self.settings, row)
            if tokens is None:
                # Unreadable: the deployment key changed since, or Canvas had refused them before.
                if row.lost_at is None:
                    mark_lost(row)
                    await session.commit()
                raise Reconnect(self.settings)
            access, self._refresh_token = tokens
            ending = row.expires_at is not None and row.expires_at - utcnow() < REFRESH_MARGIN
        self._http = CanvasHttp(
            self._client,
            self.origin,
            access,
            timeout_seconds=self.plugin_settings.timeout_seconds,
            max_pages=self.plugin_settings.max_pages,
        )
        if ending and self._refresh_token is not None:
            await self._refresh()
        return self._http

    def _http_with_current_token(self) -> CanvasHttp:
        assert self._http is not None
        return self._http

    async def _refresh(self) -> None:
        assert self._refresh_token is not None and self._http is not None
        self._refreshed = True
        try:
            answer = await oauth.refresh(self._client, self.plugin_settings, self._refresh_token)
        except oauth.GrantRefused:
            await self._lose()
        async with self.sessions() as session:
            row = await session.get(CanvasConnection, self.student_id)
            if row is None:  # disconnected meanwhile
                raise NotConnected(self.settings)
            save_refresh(row, self.settings, answer)
            await session.commit()
        self._http.token = answer.access_token

    async def _lose(self) -> NoReturn:
        async with self.sessions() as session:
            row = await session.get(CanvasConnection, self.student_id)
            if row is not None:
                mark_lost(row)
                await session.commit()
        raise Reconnect(self.settings)


@asynccontextmanager
async def canvas_reader(
    sessions: Sessions, settings: Settings, plugin_settings: CanvasSettings, student_id: int
) -> AsyncIterator[CanvasReader]:
    """The student's reader, or NotConnected / Reconnect (their words carry the link)."""
    async with sessions() as session:
        row = await session.get(CanvasConnection, student_id)
        if row is None:
            raise NotConnected(settings)
        if row.lost_at is not None or (row.demo and not is_demo(plugin_settings)):
            raise Reconnect(settings)
        session.expunge(row)
    async with open_client(plugin_settings) as client:
        yield CanvasReader(sessions, settings, plugin_settings, row, client)
