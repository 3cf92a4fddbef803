"""GET one document from a configured feed (calendar, programs, elective lists): https only,
bounded in size and time, failures by kind (a timeout or 5xx is retried by the next run)."""

from __future__ import annotations

import httpx

from campus_catalog.sources.errors import UnreadableResponse, UpstreamUnavailable

MAX_FEED_BYTES = 5_000_000
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def fetch_feed(url: str, timeout_seconds: float, *, what: str, accept: str) -> bytes:
    """The feed's bytes. Redirects are followed only while they stay on https (or loopback in tests)."""
    try:
        async with httpx.AsyncClient(timeout=timeout_seconds, follow_redirects=True, max_redirects=3) as http:
            response = await http.get(url, headers={"Accept": accept})
    except httpx.TimeoutException as exc:
        raise UpstreamUnavailable(f"{what} timed out after {timeout_seconds:g} s", kind="timeout") from exc
    except httpx.TransportError as exc:
        raise UpstreamUnavailable(f"{what} could not be reached: {type(exc).__name__}", kind="network") from exc
    if response.url.scheme != "https" and response.url.host not in _LOOPBACK:
        raise UnreadableResponse(f"{what} redirected away from https", kind="client")
    if response.status_code >= 500:
        raise UpstreamUnavailable(f"{what} answered HTTP {response.status_code}", kind="server")
    if response.status_code >= 300:
        raise UnreadableResponse(f"{what} answered HTTP {response.status_code}", kind="client")
    if len(response.content) > MAX_FEED_BYTES:
        raise UnreadableResponse(f"{what} is larger than {MAX_FEED_BYTES} bytes", kind="parse")
    return response.content
