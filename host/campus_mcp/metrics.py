"""Counters in the Prometheus text format, served at ``/metrics``.

Kept in the process: each web worker reports its own counts and the scraper sums them, which is
how Prometheus treats per-instance counters anyway.
"""

from __future__ import annotations

import threading
from collections import Counter

_lock = threading.Lock()
_counts: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
PREFIX = "campus_mcp_"


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
