"""Counters in the Prometheus text format, served at ``/metrics``.

Kept in the process: each web worker reports its own counts and the scraper sums them, which is
how Prometheus treats per-instance counters anyway.

``/metrics`` names every tool, scope and outcome a deployment sees, so it is not public
(:func:`metrics_guard`): a scraper reads it from an address in ``CAMPUS_MCP_METRICS_ADDRESSES``
(default: loopback only) or with the bearer token ``CAMPUS_MCP_METRICS_TOKEN``. The address is
the TCP peer's: ``serve`` does not trust X-Forwarded-For, so behind a proxy either list the
proxy or give the scraper the token.
"""

from __future__ import annotations

import hmac
import ipaddress
import threading
from collections import Counter
from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler

_lock = threading.Lock()
_counts: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
PREFIX = "campus_mcp_"


# The outcomes of campus_mcp_tool_calls_total{tool,outcome} (seed 000 "Confirmation"): a question
# sent is input_required, a change the student did not confirm is declined or cancelled; denied is a
# missing scope, error a refused call (bad arguments or requestState), failed a server fault.
# rate_limited is reserved for issue 15.
TOOL_CALL_OUTCOMES = ("ok", "error", "failed", "denied", "input_required", "declined", "cancelled", "rate_limited")


def count_tool_call(tool: str, outcome: str) -> None:
    """Count one ``tools/call`` by its outcome (one of :data:`TOOL_CALL_OUTCOMES`)."""
    if outcome not in TOOL_CALL_OUTCOMES:
        raise ValueError(f"unknown tool call outcome {outcome!r}; use one of {', '.join(TOOL_CALL_OUTCOMES)}")
    count("tool_calls_total", tool=tool, outcome=outcome)


def count(name: str, **labels: str) -> None:
    key = (name, tuple(sorted(labels.items())))
    with _lock:
        _counts[key] += 1


def value(name: str, **labels: str) -> int:
    """The count of one series; with fewer labels, the sum over the series that match them."""
    with _lock:
        return sum(
            n
            for (series, lbls), n in _counts.items()
            if series == name and all((k, v) in lbls for k, v in labels.items())
        )


def render() -> str:
    lines: list[str] = []
    with _lock:
        items = sorted(_counts.items())
    seen: set[str] = set()
    for (name, labels), n in items:
        if name not in seen:
            lines.append(f"# TYPE {PREFIX}{name} counter")
            seen.add(name)
        label_text = ",".join(f'{k}="{v}"' for k, v in labels)
        lines.append(f"{PREFIX}{name}{{{label_text}}} {n}")
    return "\n".join(lines) + "\n"


def _address_allowed(host: str | None, allowed: list[str]) -> bool:
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in allowed:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue  # not an address: nothing matches it
    return False


def _token_allowed(authorization: str, expected: str) -> bool:
    scheme, _, given = authorization.partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    # Constant time, so the answer's timing does not tell how much of a guess was right.
    return hmac.compare_digest(given.strip().encode(), expected.encode())


def metrics_guard(connection: ASGIConnection[Any, Any, Any, Any], _handler: BaseRouteHandler) -> None:
    """Let through a scraper from an allowed address or with the metrics token; refuse the rest."""
    settings = connection.app.state.deployment.settings
    client = connection.client.host if connection.client else None
    if _address_allowed(client, settings.metrics_addresses):
        return
    if _token_allowed(connection.headers.get("authorization", ""), settings.metrics_token.get_secret_value()):
        return
    # The message names the settings, never the token (nor what was sent).
    raise PermissionDeniedException(
        "/metrics is open only to the addresses in CAMPUS_MCP_METRICS_ADDRESSES (default: loopback) "
        "or to a scraper that sends the bearer token CAMPUS_MCP_METRICS_TOKEN."
    )
