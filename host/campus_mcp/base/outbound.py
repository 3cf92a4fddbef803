"""The guard of every outbound fetch a visitor can aim (SSRF): what the host fetches from a URL that
someone else chose, such as a client's metadata document, a SAML identity provider's metadata or a
platform's list of address ranges. Each rule is held by a test (``tests/oauth/test_oauth_cimd.py``,
``tests/oauth/test_security_ssrf.py``):

- HTTPS on port 443 only;
- the host's every address must be public (a name that resolves to one public and one private
  address is refused; an IPv6 address that embeds an IPv4 one, NAT64, 6to4, IPv4-compatible or
  IPv4-mapped, is judged by the IPv4 address it leads to), and the connection goes to an address
  that was checked, so a DNS answer that changes between the check and the connection
  (rebinding) cannot slip through;
- no redirects are followed; at most the limit's bytes are read (``DocumentLimit``).

``oauth_metadata_loopback_for_tests`` relaxes the first two rules to loopback addresses on any
port, for tests only.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from urllib.parse import urlsplit

import anyio
import httpx

from campus_mcp.base.outside_documents import DocumentLimit, read_document
from campus_mcp.base.settings import Settings

FETCH_SECONDS = 5.0


class FetchRefused(Exception):
    """Why a fetch was refused or what it answered was; the text may be shown to whoever asked."""


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


def address_allowed(address: str, settings: Settings) -> bool:
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in NAT64_LOCAL_USE:
            return False
        ip = _embedded_ipv4(ip) or ip
    if settings.oauth_metadata_loopback_for_tests and ip.is_loopback:
        return True
    return ip.is_global and not ip.is_multicast


async def _resolve(host: str, port: int, what: str) -> list[str]:
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchRefused(f"the host {host} of {what} does not resolve") from exc
    return sorted({str(info[4][0]) for info in infos})


def _check_url(url: str, settings: Settings, what: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise FetchRefused(f"{what} must be served over https")
    if not parts.hostname or parts.username or parts.password:
        raise FetchRefused(f"{what} URL has no usable host")
    try:
        port = parts.port or 443
    except ValueError as exc:
        raise FetchRefused(f"{what} URL has an invalid port") from exc
    if port != 443 and not settings.oauth_metadata_loopback_for_tests:
        raise FetchRefused(f"{what} must be served on port 443")
    if parts.path in ("", "/"):
        raise FetchRefused(f"{what} URL needs a path")
    return parts.hostname, port, parts.path + (f"?{parts.query}" if parts.query else "")


def _tls_context(settings: Settings) -> ssl.SSLContext:
    if settings.oauth_metadata_ca_file:
        return ssl.create_default_context(cafile=settings.oauth_metadata_ca_file)
    return ssl.create_default_context()


async def guarded_get(url: str, settings: Settings, *, limit: DocumentLimit) -> bytes:
    """GET ``url`` behind the guard (the module's rules), read up to ``limit``
    (campus_mcp.base.outside_documents), whose ``what`` names the document in the errors. Raises
    :class:`FetchRefused`, :class:`DocumentTooLarge`, or httpx's errors for a connection that failed."""
    what = limit.what
    host, port, target = _check_url(url, settings, what)
    addresses = await _resolve(host, port, what)
    refused = [a for a in addresses if not address_allowed(a, settings)]
    if not addresses or refused:
        raise FetchRefused(f"the host {host} of {what} resolves to an address that is not public")
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
        raise FetchRefused(f"{what} URL redirects; redirects are not followed")
    if response.status_code != 200:
        raise FetchRefused(f"{what} URL answered HTTP {response.status_code}")
    return response.content
