"""The client's address of a request: the TCP peer, or the client a trusted proxy forwards for.

Everything that counts or checks addresses reads it here: the rate limits, the sign-in and
registration limits, ``/metrics`` (loopback by default) and the request ids' trusted sources.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from campus_mcp.base.settings import Settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def networks(entries: Iterable[str], setting: str) -> tuple[Network, ...]:
    found: list[Network] = []
    for entry in entries:
        try:
            found.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{setting}: {entry!r} is not an address or a network like 10.0.0.0/8") from None
    return tuple(found)


# Every counted request reads its address (its platform range, then its per-address key): parsing
# it is most of the limits' own cost. Both are pure functions of the
# text, so a few recent addresses are kept; bounded, since X-Forwarded-For can hold any text.
@functools.lru_cache(maxsize=1024)
def parse_address(host: str) -> Address | None:
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@functools.lru_cache(maxsize=1024)
def address_key(host: str) -> str:
    """Whom a per-address limit counts: an IPv4 address, or the /64 network of an IPv6 one
    (one subscriber holds a whole /64, so counting single IPv6 addresses would count nothing)."""
    address = parse_address(host)
    if address is None:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def within(host: str, nets: Sequence[Network]) -> Network | None:
    """The first of ``nets`` that holds ``host``, else None."""
    address = parse_address(host)
    if address is None:
        return None
    for net in nets:
        if address.version == net.version and address in net:
            return net
    return None


def client_host(peer: str, forwarded_for: Sequence[str], trusted: Sequence[Network]) -> str:
    """The client's address: the TCP peer, unless the peer is a trusted proxy; then the nearest
    X-Forwarded-For entry that is not one of the trusted proxies (entries further left are the
    client's own say and can be anything)."""
    if not trusted or within(peer, trusted) is None:
        return peer
    hops = [part.strip() for value in forwarded_for for part in value.split(",") if part.strip()]
    for hop in reversed(hops):
        if within(hop, trusted) is None:
            return hop if parse_address(hop) is not None else peer
    return hops[0] if hops else peer


# Headers a proxy adds to say whom it forwards for: from a peer that is not a trusted proxy, they
# mean a proxy we do not know stands between the client and us (a same-host nginx, say).
FORWARDING_HEADERS = (b"x-forwarded-for", b"forwarded", b"x-real-ip")


def _headers(scope: Mapping[str, Any], name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", ()) if key.lower() == name]


def peer_of(scope: Mapping[str, Any]) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def client_address(scope: Mapping[str, Any], trusted: Sequence[Network]) -> str:
    """The client's address of one request, for everything that counts or checks addresses (the
    rate limits, the sign-in and registration limits, /metrics): the X-Forwarded-For client when
    the TCP peer is one of ``trusted`` (``CAMPUS_MCP_TRUSTED_PROXIES``), else the peer."""
    return client_host(peer_of(scope), _headers(scope, b"x-forwarded-for"), trusted)


def through_unknown_proxy(scope: Mapping[str, Any], trusted: Sequence[Network]) -> bool:
    """Whether the request carries a proxy's forwarding headers from a peer that is not trusted:
    its peer address is the proxy's, which says nothing about who the client is."""
    if within(peer_of(scope), trusted) is not None:
        return False
    return any(_headers(scope, name) for name in FORWARDING_HEADERS)


@functools.lru_cache(maxsize=16)
def _trusted(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return networks(entries, "CAMPUS_MCP_TRUSTED_PROXIES")


def trusted_proxies(settings: Settings) -> tuple[Network, ...]:
    """``CAMPUS_MCP_TRUSTED_PROXIES`` parsed (once per distinct value, not per request)."""
    return _trusted(tuple(settings.trusted_proxies))
