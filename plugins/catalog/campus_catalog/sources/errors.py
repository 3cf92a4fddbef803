"""Upstream failures by kind (seed 001: "record failures by kind, or transient ones become permanent").

``retry`` says what the next run does: a timeout or a 5xx is tried again on the next run; a
response that does not parse, or a request the allowlist refuses, is final until someone changes
the code or the data, so retrying it every night would only hide it.
"""

from __future__ import annotations

from typing import Literal

FailureKind = Literal["timeout", "network", "server", "client", "parse", "refused", "too_large"]


class SourceError(Exception):
    """An upstream failed. ``kind`` and ``retry`` go into the job-run record."""

    kind: FailureKind = "server"
    retry: bool = True

    def __init__(self, message: str, *, kind: FailureKind | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
            self.retry = kind in ("timeout", "network", "server")

    def record(self) -> str:
        """The line a job run keeps: what failed, and whether the next run tries again."""
        then = "retried on the next run" if self.retry else "final: fix the input or the code"
        return f"{self.kind}: {self} ({then})"


class UpstreamUnavailable(SourceError):
    """Timeout, connection failure or 5xx: transient."""

    kind: FailureKind = "server"
    retry = True


class UpstreamRefusedRequest(SourceError):
    """The choke point refused a request that is not on the read allowlist. A bug, never retried."""

    kind: FailureKind = "refused"
    retry = False


class UnreadableResponse(SourceError):
    """The upstream answered, but not with something we can read (4xx, not JSON, wrong shape)."""

    kind: FailureKind = "parse"
    retry = False
