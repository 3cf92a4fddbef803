"""Documents fetched from outside, read with a limit on their size.

The server fetches documents it does not write: the campus sign-in service's discovery document,
keys (JWKS) and userinfo, CAS's validation answers, SAML metadata, an app's client ID metadata
document, the catalog's Banner pages and feeds (the academic calendar, programs, elective lists),
the enrollment feed. Read whole, one of 60 MB took the server from 314 to 678 MB and it stayed
there (issue 35, point 14). Each is read through :func:`read_document`, with a
:class:`DocumentLimit` saying what it is, the most of it that is read, and the setting that
raises that:

- A declared ``Content-Length`` over the limit is refused before a byte of the body is read.
- The body is streamed and counted as it arrives; past the limit the connection is dropped and
  :class:`DocumentTooLarge` says which document, its limit and what to do.
- Only ``gzip`` is asked for; a compressed body (gzip or deflate) is inflated in steps that never
  produce more than the limit, so a compressed bomb stops where a plain document would. Any other
  encoding was not asked for and is refused (``httpx.DecodingError``).

What it returns is an ``httpx.Response`` holding the body, so a caller reads ``.json()``,
``.text`` and ``.status_code`` as before; its errors are httpx's, which callers already handle,
and :class:`DocumentTooLarge`. Where a document may come from a URL someone else chose (a client
ID metadata document), the SSRF guard of campus_mcp.oauth.cimd connects first, then reads
through here.

One answer is not fetched by this server's own code: the OpenID Connect token endpoint's, which
authlib's client requests and reads (its checks of the answer are the point of using it). That
client is built on httpx2, and takes a transport: :class:`LimitedTransport` reads each answer's
body the same way, up to its limit, before authlib sees it.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx
import httpx2

if TYPE_CHECKING:
    from campus_mcp.settings import Settings

# An inflater that recognises a gzip or a zlib header (deflate as sent in practice).
_GZIP_OR_ZLIB = 32 + zlib.MAX_WBITS
# Headers that describe the body as it came over the wire, not the body handed on.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@dataclasses.dataclass(frozen=True)
class DocumentLimit:
    """How much of one kind of document is read: ``what`` names it for a person ("the campus
    sign-in service's keys (JWKS)"), ``setting`` is the ``CAMPUS_MCP_`` variable that raises
    ``max_bytes``, or None when the limit is the protocol's and the publisher must shrink it."""

    what: str
    max_bytes: int
    setting: str | None = None


def sign_in_limit(settings: Settings, what: str) -> DocumentLimit:
    """The limit of a document of the campus sign-in service (``sign_in_document_max_bytes``)."""
    return DocumentLimit(what, settings.sign_in_document_max_bytes, "CAMPUS_MCP_SIGN_IN_DOCUMENT_MAX_BYTES")


def size_words(count: int) -> str:
    """A byte count for a person: ``2 MB``, ``10 KB``, ``512 bytes`` (binary units, as configured)."""
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):g} MB"
    if count >= 1024:
        return f"{count / 1024:g} KB"
    return f"{count} bytes"


def _where(request: httpx.Request | httpx2.Request) -> str:
    """The document's address by the name it was asked for (the Host header: a guarded fetch
    connects to the address it checked), without a query or credentials (a feed URL may carry a key)."""
    url = request.url
    return f"{url.scheme}://{request.headers.get('host') or url.netloc.decode()}{url.path}"


class DocumentTooLarge(Exception):
    """A fetched document passed its limit; the text names it, the limit and what to do."""

    def __init__(self, limit: DocumentLimit, request: httpx.Request | httpx2.Request) -> None:
        self.limit = limit
        fix = (
            f"If the document is right, raise {limit.setting}; if not, tell whoever publishes it."
            if limit.setting
            else "Make the document smaller."
        )
        super().__init__(
            f"{limit.what} at {_where(request)} is larger than {size_words(limit.max_bytes)}, the most this "
            f"server reads of it, so it was not read. {fix}"
        )


async def read_document(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL | str,
    *,
    limit: DocumentLimit,
    headers: dict[str, str] | None = None,
    **request: Any,
) -> httpx.Response:
    """``method url`` through ``client`` (its timeouts, redirects and headers apply), its body read
    up to ``limit``. ``request`` is what ``client.stream`` takes besides (params, data, extensions)."""
    asked = {"Accept-Encoding": "gzip", **(headers or {})}
    async with client.stream(method, url, headers=asked, **request) as response:
        body = await _capped_body(
            response, response.request, limit, lambda words: httpx.DecodingError(words, request=response.request)
        )
    kept = [(name, value) for name, value in response.headers.multi_items() if name.lower() not in _WIRE_HEADERS]
    return httpx.Response(response.status_code, headers=kept, content=body, request=response.request)


async def _capped_body(
    response: httpx.Response | httpx2.Response,
    request: httpx.Request | httpx2.Request,
    limit: DocumentLimit,
    undecodable: Callable[[str], Exception],
) -> bytes:
    """The body of ``response`` to ``request``, inflated, up to ``limit``. ``undecodable`` makes the
    decoding error of the response's own library (httpx or httpx2), which its callers handle."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    declared = response.headers.get("content-length", "").strip()
    if encoding == "identity" and declared.isdigit() and int(declared) > limit.max_bytes:
        raise DocumentTooLarge(limit, request)
    if encoding in ("gzip", "x-gzip", "deflate"):
        inflater: Any = zlib.decompressobj(_GZIP_OR_ZLIB)
    elif encoding == "identity":
        inflater = None
    else:
        raise undecodable(f"{limit.what} came in the {encoding!r} encoding, which was not asked for")
    body = bytearray()
    async for chunk in response.aiter_raw():
        if inflater is not None:
            # Never more than one byte past the limit from one chunk, however well it compresses:
            # that byte is enough to know the document is too large (the rest of the chunk waits
            # in the inflater's unconsumed_tail and is dropped with it).
            try:
                chunk = inflater.decompress(chunk, limit.max_bytes - len(body) + 1)
            except zlib.error as exc:
                raise undecodable(f"{limit.what} is compressed and cannot be read") from exc
        body.extend(chunk)
        if len(body) > limit.max_bytes:
            raise DocumentTooLarge(limit, request)
    return bytes(body)


class LimitedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport whose answers are read up to ``limit`` before the client sees them (for
    authlib's client, which reads the token endpoint's answer whole on its own): the body is read
    here as :func:`read_document` reads it, and handed on whole and plain (not compressed)."""

    def __init__(self, limit: DocumentLimit, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.limit = limit
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        # Only gzip is inflated here, as read_document asks: not whatever else the client would take.
        request.headers["Accept-Encoding"] = "gzip"
        response = await self.inner.handle_async_request(request)
        try:
            body = await _capped_body(
                response, request, self.limit, lambda words: httpx2.DecodingError(words, request=request)
            )
        finally:
            # Past the limit this drops the connection: the sender stops, the rest is never read.
            await response.aclose()
        kept = [(name, value) for name, value in response.headers.multi_items() if name.lower() not in _WIRE_HEADERS]
        return httpx2.Response(response.status_code, headers=kept, content=body, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()
