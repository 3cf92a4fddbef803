"""Every request to Canvas, guarded: one origin, bounded in time and size, paged by ``Link``, and
polite about Canvas's rate limit.

- **One origin.** Requests go to the configured Canvas only: paths are joined to it, redirects are
  not followed (a 3xx is an error), and a ``Link: rel="next"`` to any other origin is refused.
- **Bounded.** Each request has the ``timeout_seconds`` setting (connect, read, write and pool); a
  body larger than ``MAX_BYTES`` is refused while it is read; a list reads at most ``max_pages``
  pages (``per_page=100``) and says when it stopped early.
- **Rate limit.** Canvas gives each token a bucket and says what is left in ``X-Rate-Limit-Remaining``
  and what the request cost in ``X-Request-Cost``. When the bucket runs low the next request of that
  token waits a moment; a ``403`` whose body says ``Rate Limit Exceeded`` is retried after a back-off
  (``BACKOFF_SECONDS``), then answered as "Canvas asks to slow down".
- **Errors by kind**, never a stack trace: ``CanvasUnavailable`` (timeout, network, server,
  rate_limited, too_large, unreadable, redirected), ``TokenRejected`` (401 with ``WWW-Authenticate``:
  the token is invalid, expired or revoked; the caller refreshes or asks the student to reconnect)
  and ``CanvasRefused`` (401 without it, or 403: the token may not read that; the developer key's
  scopes or the student's enrolment).

Nothing here logs a token, a URL with a query, or a body.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from campus_mcp import CampusError, count_metric

log = logging.getLogger(__name__)

MAX_BYTES = 4_000_000
PER_PAGE = 100
# Waits before each retry of a rate-limited request (Canvas: "403 Forbidden (Rate Limit Exceeded)").
BACKOFF_SECONDS: tuple[float, ...] = (1.0, 3.0)
# Below this much left in the token's bucket (or 3 times the last request's cost), the next request
# of that token waits LOW_BUCKET_WAIT first.
LOW_BUCKET = 100.0
LOW_BUCKET_WAIT = 1.0
# Canvas refills the bucket as time passes: a reading older than this says nothing about now.
BUCKET_FRESH_SECONDS = 10.0
Params = Sequence[tuple[str, str]]


class CanvasUnavailable(CampusError):
    """Canvas could not give an answer this time; ``kind`` says why (the words say what to do)."""

    status = 503

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class CanvasRefused(CampusError):
    """Canvas answered that this token may not read this (a scope of the developer key, an enrolment)."""

    status = 502


class TokenRejected(Exception):
    """Canvas does not take the token any more (401 with WWW-Authenticate). Never shown as is."""


@dataclasses.dataclass
class _Bucket:
    remaining: float
    cost: float
    at: float


# The rate-limit bucket Canvas last reported, per token (keyed by a digest, never the token).
_buckets: dict[str, _Bucket] = {}


def _bucket_key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:24]


@dataclasses.dataclass(frozen=True)
class Page:
    items: list[Any]
    more: bool  # the list went on past max_pages


class CanvasHttp:
    """One student's requests to Canvas in one call: the token, the origin, the limits."""

    def __init__(
        self, client: httpx.AsyncClient, origin: str, token: str, *, timeout_seconds: float, max_pages: int
    ) -> None:
        self.client = client
        self.origin = origin
        self.token = token
        self.timeout_seconds = timeout_seconds
        self.max_pages = max_pages
        self.requests = 0

    def _url(self, path_or_url: str) -> str:
        if path_or_url.startswith("/"):
            return f"{self.origin}{path_or_url}"
        if _origin_of(path_or_url) != self.origin:
            # A next page on another host would carry the student's token there.
            raise CanvasUnavailable(
                "Canvas sent a next page on another address, which was not followed. Try again later; if it "
                "keeps happening, tell the campus's Canvas administrators.",
                kind="redirected",
            )
        return path_or_url

    async def get_json(self, path: str, params: Params = ()) -> Any:
        _response, body = await self._get(self._url(path), params)
        return _json(body)

    async def get_list(self, path: str, params: Params = ()) -> Page:
        """Every item of a Canvas list, following ``Link: rel="next"`` for at most ``max_pages`` pages."""
        url: str | None = self._url(path)
        query: Params = (*params, ("per_page", str(PER_PAGE)))
        items: list[Any] = []
        for _page in range(self.max_pages):
            assert url is not None
            response, body = await self._get(url, query)
            answer = _json(body)
            if not isinstance(answer, list):
                raise CanvasUnavailable(_unreadable(), kind="unreadable")
            items.extend(answer)
            following = response.links.get("next", {}).get("url")
            if not following:
                return Page(items, more=False)
            url, query = self._url(following), ()  # the next link carries the whole query
        return Page(items, more=True)

    async def _get(self, url: str, params: Params) -> tuple[httpx.Response, bytes]:
        headers = {"Authorization": f"Bearer {self.token}"}
        for attempt in range(len(BACKOFF_SECONDS) + 1):
            await _wait_for_bucket(self.token)
            response, body = await send(
                self.client, "GET", url, params=params, headers=headers, seconds=self.timeout_seconds
            )
            self.requests += 1
            _note_bucket(self.token, response)
            if response.status_code == 403 and b"rate limit exceeded" in body[:500].lower():
                count_metric("canvas_requests", outcome="rate_limited")
                if attempt < len(BACKOFF_SECONDS):
                    await asyncio.sleep(BACKOFF_SECONDS[attempt])
                    continue
                raise CanvasUnavailable(
                    "Canvas asks this server to slow down (its rate limit for your account). Try again in a minute.",
                    kind="rate_limited",
                )
            check_status(response)
            count_metric("canvas_requests", outcome="ok")
            return response, body
        raise AssertionError("unreachable")  # the loop returns or raises


async def send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    seconds: float,
    params: Params | None = None,
    headers: Mapping[str, str] | None = None,
    data: Mapping[str, str] | None = None,
) -> tuple[httpx.Response, bytes]:
    """One request, its body read up to ``MAX_BYTES``; failures as CanvasUnavailable by kind."""
    try:
        async with asyncio.timeout(seconds * 2):  # every phase has ``timeout``; the whole request twice that
            # No params keeps the URL's own query (a next page's link); an empty QueryParams drops it.
            request = client.build_request(
                method, url, params=httpx.QueryParams(list(params)) if params else None, headers=headers, data=data
            )
            response = await client.send(request, stream=True, follow_redirects=False)
            try:
                body = bytearray()
                # A transport inside the process (the demo Canvas) hands the body over already read.
                chunks = [response.content] if response.is_stream_consumed else response.aiter_raw()
                async for chunk in _each(chunks):
                    body.extend(chunk)
                    if len(body) > MAX_BYTES:
                        count_metric("canvas_requests", outcome="too_large")
                        raise CanvasUnavailable(
                            f"Canvas answered with more than {MAX_BYTES // 1_000_000} MB for one page, which was "
                            "not read. Ask for a shorter window or one course.",
                            kind="too_large",
                        )
            finally:
                await response.aclose()
    except (TimeoutError, httpx.TimeoutException) as exc:
        count_metric("canvas_requests", outcome="timeout")
        raise CanvasUnavailable(
            f"Canvas did not answer within {seconds:g} seconds. It may be slow or down: try again in a few minutes.",
            kind="timeout",
        ) from exc
    except httpx.TransportError as exc:
        count_metric("canvas_requests", outcome="network")
        log.warning("Canvas could not be reached: %s", type(exc).__name__)
        raise CanvasUnavailable(
            "Canvas could not be reached from this server. It may be down: try again in a few minutes.", kind="network"
        ) from exc
    return response, _decoded(response, bytes(body))


async def _each(chunks: list[bytes] | AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if isinstance(chunks, list):
        for chunk in chunks:
            yield chunk
    else:
        async for chunk in chunks:
            yield chunk


def _decoded(response: httpx.Response, raw: bytes) -> bytes:
    # aiter_raw gives the bytes as sent; a gzip answer is unpacked here, after the size was checked.
    encoding = response.headers.get("content-encoding", "").lower()
    if encoding in ("gzip", "deflate"):
        import zlib

        try:
            unpacked = zlib.decompressobj(wbits=47).decompress(raw, MAX_BYTES + 1)
        except zlib.error as exc:
            raise CanvasUnavailable(_unreadable(), kind="unreadable") from exc
        if len(unpacked) > MAX_BYTES:
            raise CanvasUnavailable(
                f"Canvas answered with more than {MAX_BYTES // 1_000_000} MB for one page, which was not read.",
                kind="too_large",
            )
        return unpacked
    return raw


def check_status(response: httpx.Response) -> None:
    """An error answer as the error of its kind; a 2xx passes."""
    status = response.status_code
    if 200 <= status < 300:
        return
    if status == 401 and "www-authenticate" in response.headers:
        count_metric("canvas_requests", outcome="token_rejected")
        raise TokenRejected()
    if status in (401, 403):
        count_metric("canvas_requests", outcome="refused")
        raise CanvasRefused(
            "Canvas says your account may not read this (the campus's Canvas key may lack the permission, or "
            "the course is closed to you). Open it in Canvas to check; the campus's Canvas administrators can add "
            "the permission to the key."
        )
    if status == 404:
        count_metric("canvas_requests", outcome="not_found")
        raise CanvasRefused(
            "Canvas has no such course or item for your account. Check the course, or list your courses first."
        )
    if 300 <= status < 400:
        count_metric("canvas_requests", outcome="redirected")
        raise CanvasUnavailable(
            "Canvas answered with a redirect, which was not followed. Try again later; if it keeps happening, "
            "tell the campus's Canvas administrators.",
            kind="redirected",
        )
    count_metric("canvas_requests", outcome="server")
    raise CanvasUnavailable(
        f"Canvas answered with an error (HTTP {status}). It may be down or busy: try again in a few minutes.",
        kind="server",
    )


def _json(body: bytes) -> Any:
    import json

    try:
        return json.loads(body)
    except ValueError as exc:
        count_metric("canvas_requests", outcome="unreadable")
        raise CanvasUnavailable(_unreadable(), kind="unreadable") from exc


def _unreadable() -> str:
    return "Canvas answered with something that is not the answer it documents. Try again later."


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _note_bucket(token: str, response: httpx.Response) -> None:
    remaining = response.headers.get("x-rate-limit-remaining")
    if remaining is None:
        return
    try:
        cost = float(response.headers.get("x-request-cost") or 0)
        _buckets[_bucket_key(token)] = _Bucket(float(remaining), cost, time.monotonic())
    except ValueError:
        return
    if len(_buckets) > 10_000:  # one entry per token seen lately; old ones go
        for key in list(_buckets)[:5_000]:
            del _buckets[key]


async def _wait_for_bucket(token: str) -> None:
    bucket = _buckets.get(_bucket_key(token))
    if bucket is None:
        return
    # Low: less than LOW_BUCKET left, or less than a few requests of the last one's cost.
    low = bucket.remaining < max(LOW_BUCKET, 3 * bucket.cost)
    if low and time.monotonic() - bucket.at < BUCKET_FRESH_SECONDS:
        count_metric("canvas_requests", outcome="waited_for_rate_limit")
        await asyncio.sleep(LOW_BUCKET_WAIT)
