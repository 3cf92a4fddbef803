"""GET one document from a configured feed (calendar, programs, elective lists, the enrollment
feed): https only, bounded in size (campus_mcp.read_document: the feed's own limit, checked as it
streams, on every redirect too) and in time, failures by kind (a timeout or 5xx is retried by the
next run; a document past its limit is final until the limit or the feed changes)."""

from __future__ import annotations

import httpx
from campus_mcp import DocumentLimit, DocumentTooLarge, read_document

from campus_catalog.sources.errors import UnreadableResponse, UpstreamUnavailable

MAX_REDIRECTS = 3
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _https_or_loopback(url: httpx.URL) -> bool:
    return url.scheme == "https" or url.host in _LOOPBACK


async def fetch_feed(url: str, timeout_seconds: float, *, limit: DocumentLimit, accept: str) -> bytes:
    """The feed's bytes. Redirects are followed only while they stay on https (or loopback in tests)."""
    what = limit.what
    target = httpx.URL(url)
    try:
        # Redirects one by one, each read through the limit (httpx would read a redirect's body whole).
        async with httpx.AsyncClient(timeout=timeout_seconds, follow_redirects=False) as http:
            for _hop in range(MAX_REDIRECTS + 1):
                response = await read_document(http, "GET", target, headers={"Accept": accept}, limit=limit)
                if not response.is_redirect:
                    break
                target = target.join(response.headers["location"])
                if not _https_or_loopback(target):
                    raise UnreadableResponse(f"{what} redirected away from https", kind="client")
            else:
                raise UnreadableResponse(f"{what} redirected more than {MAX_REDIRECTS} times", kind="client")
    except DocumentTooLarge as exc:
        raise UnreadableResponse(str(exc), kind="too_large") from exc
    except httpx.TimeoutException as exc:
        raise UpstreamUnavailable(f"{what} timed out after {timeout_seconds:g} s", kind="timeout") from exc
    except httpx.TransportError as exc:
        raise UpstreamUnavailable(f"{what} could not be reached: {type(exc).__name__}", kind="network") from exc
    if response.status_code >= 500:
        raise UpstreamUnavailable(f"{what} answered HTTP {response.status_code}", kind="server")
    if response.status_code >= 300:
        raise UnreadableResponse(f"{what} answered HTTP {response.status_code}", kind="client")
    return response.content
