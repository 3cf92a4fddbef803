"""The named limits of seed 000 "Rate limits", whom each request counts against, and the
client's address.

A limit has a name (``api/user``), how many requests its window allows, and the words a refusal
uses. A deployment changes the numbers with ``CAMPUS_MCP_RATE_LIMIT_OVERRIDES``
(``api/user=200,oauth/register=20/600``: a count, or a count per so many seconds).
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from campus_mcp.base.settings import Settings
from campus_mcp.oauth.registration import REGISTRATION_WINDOW_SECONDS, REGISTRATIONS_PER_ADDRESS

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclasses.dataclass(frozen=True)
class RateLimit:
    """At most ``count`` requests per ``window`` seconds; ``what`` and ``whose`` name them in a refusal."""

    name: str
    count: int
    window: float = 60.0
    what: str = "requests"
    whose: str = "from your network address"
    # What to do other than wait, when waiting alone would not help (a refusal's message ends with it).
    advice: str = ""

    def describe(self) -> str:
        """``at most 100 a minute`` / ``at most 20 in 10 minutes``."""
        if self.window == 60:
            return f"at most {self.count} a minute"
        if self.window % 60 == 0:
            return f"at most {self.count} in {int(self.window // 60)} minutes"
        return f"at most {self.count} in {self.window:g} seconds"


# Seed 000's numbers; the per-address ones it leaves open are chosen here.
USER = RateLimit("api/user", 100, what="requests", whose="for your account (every app you connected shares them)")
# One address can be a campus network's NAT, so it gets more than one student does.
ADDRESS = RateLimit("api/address", 300, what="requests without a sign-in")
PLATFORM = RateLimit("mcp/platform", 3000, what="requests without a token", whose="from your platform's address range")
# A client registers once per installation (see oauth/registration.py); far from a flood's 200 in 11 s.
REGISTER = RateLimit(
    "oauth/register", REGISTRATIONS_PER_ADDRESS, window=REGISTRATION_WINDOW_SECONDS, what="app registrations"
)
# A code exchange or a refresh per sign-in and per hour of use; 60 a minute is a burst of sign-ins.
TOKEN = RateLimit("oauth/token", 60, what="token requests")
REVOKE = RateLimit("oauth/revoke", 60, what="revocations")
# Bearer checks that failed (unknown, expired, revoked, malformed), per address, on a counter of
# their own: guesses from a campus NAT must not use up the budget of the students there whose
# tokens are good (api/user) or who come without one (api/address). An honest client fails about
# once an hour per student (its token expires, it signs in again); 60 a minute is a NAT's worth of
# those and bounds a guesser to one check a second.
BAD_TOKEN = RateLimit(
    "api/bad-token",
    60,
    what="requests with an invalid, expired or revoked token",
    advice="Retrying with the same token will not help: sign in again (or make a new token) and use the new one.",
)
HOST_LIMITS = (USER, ADDRESS, PLATFORM, REGISTER, TOKEN, REVOKE, BAD_TOKEN)


def parse_overrides(entries: Iterable[str]) -> dict[str, tuple[int, float | None]]:
    """``["api/user=200", "oauth/register=20/600"]`` -> ``{"api/user": (200, None), ...}``."""
    parsed: dict[str, tuple[int, float | None]] = {}
    for entry in entries:
        name, sep, value = entry.partition("=")
        count, _, seconds = value.partition("/")
        try:
            if not sep or not name.strip():
                raise ValueError(entry)
            number = int(count)
            window = float(seconds) if seconds else None
            if number < 1 or (window is not None and window <= 0):
                raise ValueError(entry)
        except ValueError:
            raise ValueError(
                f"CAMPUS_MCP_RATE_LIMIT_OVERRIDES: {entry!r} is not NAME=COUNT or NAME=COUNT/SECONDS, "
                "for example api/user=200 or oauth/register=20/600"
            ) from None
        parsed[name.strip()] = (number, window)
    return parsed


def configured(limit: RateLimit, overrides: Mapping[str, tuple[int, float | None]]) -> RateLimit:
    """``limit`` with the deployment's numbers, if it changed them."""
    if limit.name not in overrides:
        return limit
    count, window = overrides[limit.name]
    return dataclasses.replace(limit, count=count, window=window if window is not None else limit.window)


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


@dataclasses.dataclass(frozen=True)
class Policy:
    """The deployment's limits: the host's, and the ones plugins declared, with its numbers."""

    limits: Mapping[str, RateLimit]
    static_platforms: tuple[Network, ...]
    trusted_proxies: tuple[Network, ...]
    overrides: Mapping[str, tuple[int, float | None]]

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        overrides = parse_overrides(settings.rate_limit_overrides)
        return cls(
            limits={limit.name: configured(limit, overrides) for limit in HOST_LIMITS},
            static_platforms=networks(settings.platform_ranges, "CAMPUS_MCP_PLATFORM_RANGES"),
            trusted_proxies=trusted_proxies(settings),
            overrides=overrides,
        )

    def limit(self, declared: RateLimit) -> RateLimit:
        """A limit as this deployment sets it (a plugin's declared one may be overridden too)."""
        return self.limits.get(declared.name) or configured(declared, self.overrides)
