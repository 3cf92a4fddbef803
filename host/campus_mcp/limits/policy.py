"""The named limits of seed 000 "Rate limits", and whom each request counts against (the client's
address itself is :mod:`campus_mcp.base.addresses`'s).

A limit has a name (``api/user``), how many requests its window allows, and the words a refusal
uses. A deployment changes the numbers with ``CAMPUS_MCP_RATE_LIMIT_OVERRIDES``
(``api/user=200,oauth/register=20/600``: a count, or a count per so many seconds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from campus_mcp.base.addresses import Network, networks, trusted_proxies
from campus_mcp.base.settings import Settings

# A client registers once per installation; a campus network behind one address holds many
# installations, so the limit is generous, yet far from the 200 in 11 s of a flood.
REGISTRATIONS_PER_ADDRESS = 20
REGISTRATION_WINDOW_SECONDS = 600


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
