"""Which ``Host`` a request may name: the DNS-rebinding guard of ``/api/mcp`` and ``/metrics``.

A page on another site can make a browser on this machine (or on a network a guard trusts by
address) send requests here under the page's own name: its DNS answer changes to 127.0.0.1 after
the page loaded ("DNS rebinding"), and the browser, still on the page's origin, reads the answers.
What such a request cannot hide is its ``Host``: the attacker's name. So a route that trusts a
request for where it comes from answers only a ``Host`` this server is reached by: loopback on any
port, ``HOST:PORT`` it listens on, the public URL's, and ``CAMPUS_MCP_ALLOWED_HOSTS``.

The MCP SDK applies the lists to ``/api/mcp`` (``TransportSecuritySettings``);
:func:`host_allowed` is the same rule (an exact value, or ``name:*`` for any port of a name) for
routes the SDK does not serve (``/metrics``, campus_mcp.metrics), so both answer the same names.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from campus_mcp.settings import Settings

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


def allowed_hosts(settings: Settings) -> list[str]:
    """The ``Host`` values this server answers to, ``name:*`` meaning any port of ``name``."""
    hosts = [f"{settings.host}:{settings.port}", *LOOPBACK_HOSTS, *settings.allowed_hosts]
    if settings.public_url:
        hosts.append(urlsplit(settings.public_url).netloc)
    return hosts


def allowed_origins(settings: Settings) -> list[str]:
    """The ``Origin`` values (browser pages) the MCP endpoints answer, in the same notation."""
    origins = [*LOOPBACK_ORIGINS, *settings.allowed_origins]
    if settings.public_url:
        public = urlsplit(settings.public_url)
        origins.append(f"{public.scheme}://{public.netloc}")
    return origins


def host_allowed(host: str | None, allowed: Sequence[str]) -> bool:
    """Whether ``host`` (a request's ``Host`` header) is one of ``allowed``: equal to an entry, or
    a port of an entry ``name:*``. No ``Host`` at all is refused (HTTP/1.1 requires one)."""
    if not host:
        return False
    return any(host == entry or (entry.endswith(":*") and host.startswith(entry[:-1])) for entry in allowed)
