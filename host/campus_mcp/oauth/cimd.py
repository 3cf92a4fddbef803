"""Client ID metadata documents: a ``client_id`` that is an HTTPS URL names its own metadata.

The server fetches that URL on the first sign-in, so anybody can make it fetch a URL of their
choice: the guard below is what stops that being used to reach the campus's internal network
(SSRF). Each rule is held by a test in ``tests/test_oauth_cimd.py``:

- HTTPS on port 443 only;
- the host's every address must be public (a name that resolves to one public and one private
  address is refused; an IPv6 address that embeds an IPv4 one, NAT64, 6to4, IPv4-compatible or
  IPv4-mapped, is judged by the IPv4 address it leads to, ``tests/test_security_ssrf.py``), and
  the connection goes to an address that was checked, so a DNS answer that changes between the
  check and the connection (rebinding) cannot slip through;
- no redirects are followed;
- 5 seconds for the whole fetch, at most 10 KB of document;
- the document's own ``client_id`` must be the URL it was fetched from;
- its redirect URIs and its ``client_name`` follow the same rules as registration.

A fetched document is kept for one hour. ``oauth_metadata_loopback_for_tests`` relaxes the first
two rules to loopback addresses on any port, for tests only.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from campus_mcp.oauth.redirects import redirect_uri_problem
from campus_mcp.oauth.registration import text_problem
from campus_mcp.oauth.store import ClientRecord
from campus_mcp.outside_documents import DocumentLimit, DocumentTooLarge, read_document
from campus_mcp.settings import Settings

FETCH_SECONDS = 5.0
MAX_BYTES = 10 * 1024
CACHE_SECONDS = 3600
DOCUMENT = "the client ID metadata document"
# An app's own document of a few fields: the app's developer shrinks it, no setting raises it.
DOCUMENT_LIMIT = DocumentLimit(DOCUMENT, MAX_BYTES)


class MetadataDocumentError(Exception):
    """Why a metadata document was refused; the text is shown to the student and the client."""


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith("https://")


# NAT64 with the well-known prefix (RFC 6052): the last 32 bits are the IPv4 address reached.
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
# NAT64 for use inside one network (RFC 8215): never globally reachable (IANA), whatever it embeds.
NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")
# The deprecated IPv4-compatible form ::a.b.c.d (RFC 4291 2.5.5.1); :: and ::1 are IPv6's own.
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a packet to ``ip`` ends up at, when ``ip`` is one of the forms that carry one.

    A translator or relay on the path (NAT64, 6to4, a dual stack's mapping) delivers to the embedded
    address, so that address is the one the SSRF guard must judge.
    """
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64_WELL_KNOWN or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _address_allowed(address: str, settings: Settings) -> bool:
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in NAT64_LOCAL_USE:
            return False
        ip = _embedded_ipv4(ip) or ip
    if settings.oauth_metadata_loopback_for_tests and ip.is_loopback:
        return True
    return ip.is_global and not ip.is_multicast


async def _resolve(host: str, port: int, what: str = DOCUMENT) -> list[str]:
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise MetadataDocumentError(f"the host {host} of {what} does not resolve") from exc
    return sorted({str(info[4][0]) for info in infos})


def _check_url(url: str, settings: Settings, what: str = DOCUMENT) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise MetadataDocumentError(f"{what} must be served over https")
    if not parts.hostname or parts.username or parts.password:
        raise MetadataDocumentError(f"{what} URL has no usable host")
    try:
        port = parts.port or 443
    except ValueError as exc:
        raise MetadataDocumentError(f"{what} URL has an invalid port") from exc
    if port != 443 and not settings.oauth_metadata_loopback_for_tests:
        raise MetadataDocumentError(f"{what} must be served on port 443")
    if parts.path in ("", "/"):
        raise MetadataDocumentError(f"{what} URL needs a path")
    return parts.hostname, port, parts.path + (f"?{parts.query}" if parts.query else "")


def _tls_context(settings: Settings) -> ssl.SSLContext:
    if settings.oauth_metadata_ca_file:
        return ssl.create_default_context(cafile=settings.oauth_metadata_ca_file)
    return ssl.create_default_context()


async def _download(url: str, settings: Settings, *, limit: DocumentLimit = DOCUMENT_LIMIT) -> bytes:
    """GET ``url`` behind the SSRF guard above, read up to ``limit`` (campus_mcp.outside_documents),
    whose ``what`` names the document in the errors."""
    what = limit.what
    host, port, target = _check_url(url, settings, what)
    addresses = await _resolve(host, port, what)
    refused = [a for a in addresses if not _address_allowed(a, settings)]
    if not addresses or refused:
        raise MetadataDocumentError(f"the host {host} of {what} resolves to an address that is not public")
    address = addresses[0]
    literal = f"[{address}]" if ":" in address else address
    # Connect to the address that was checked; TLS still verifies the certificate for the name.
    pinned = f"https://{literal}:{port}{target}"
    host_header = host if port == 443 else f"{host}:{port}"
    async with httpx.AsyncClient(
        verify=_tls_context(settings), follow_redirects=False, trust_env=False, timeout=FETCH_SECONDS
    ) as client:
        response = await read_document(
            client,
            "GET",
            pinned,
            headers={"Host": host_header, "Accept": "application/json"},
            extensions={"sni_hostname": host},
            limit=limit,
        )
    if response.is_redirect:
        raise MetadataDocumentError(f"{what} URL redirects; redirects are not followed")
    if response.status_code != 200:
        raise MetadataDocumentError(f"{what} URL answered HTTP {response.status_code}")
    return response.content


async def fetch_metadata_document(
    url: str, settings: Settings, *, seconds: float = FETCH_SECONDS, known_scopes: Sequence[str] = ()
) -> ClientRecord:
    """Fetch, check and parse the document at ``url``. Raises MetadataDocumentError."""
    try:
        with anyio.fail_after(seconds):
            raw = await _download(url, settings)
    except TimeoutError as exc:
        raise MetadataDocumentError("the client ID metadata document did not arrive within 5 seconds") from exc
    except DocumentTooLarge as exc:
        raise MetadataDocumentError(str(exc)) from exc
    except httpx.HTTPError as exc:
        raise MetadataDocumentError(
            f"the client ID metadata document could not be fetched ({type(exc).__name__})"
        ) from exc
    try:
        document: Any = json.loads(raw)
    except ValueError as exc:
        raise MetadataDocumentError("the client ID metadata document is not JSON") from exc
    if not isinstance(document, dict):
        raise MetadataDocumentError("the client ID metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise MetadataDocumentError("the client ID metadata document names a different client_id than its URL")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise MetadataDocumentError("clients here are public: token_endpoint_auth_method must be 'none'")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise MetadataDocumentError("the client ID metadata document has no redirect_uris")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise MetadataDocumentError(problem)
    name = document.get("client_name")
    scope = document.get("scope")
    client_uri = document.get("client_uri")
    for field, value in (("client_name", name), ("client_uri", client_uri), ("scope", scope)):
        if (refused := text_problem(field, value)) is not None:
            raise MetadataDocumentError(f"the client ID metadata document's {refused}")
    return ClientRecord(
        client_id=url,
        kind="metadata_document",
        client_name=name.strip()[:300] if isinstance(name, str) and name.strip() else urlsplit(url).hostname or url,
        redirect_uris=tuple(uris),
        scope=" ".join(s for s in scope.split() if s in known_scopes) if isinstance(scope, str) else "",
        client_uri=client_uri if isinstance(client_uri, str) else None,
    )
