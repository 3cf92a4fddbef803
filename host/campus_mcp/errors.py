"""Errors a tool or a route raises on purpose. Each message says what was wrong and what to do.

Tools turn them into MCP tool errors (``isError: true``), routes into JSON problem responses with
the matching status. Anything else that escapes a handler is logged with its traceback on the
server and answered with a short generic message: no stack trace reaches a client.
"""

from __future__ import annotations

from collections.abc import Sequence

from campus_mcp.contributions import PageLink


class CampusError(Exception):
    """Base of the deliberate errors. ``status`` is the HTTP status a REST route answers with."""

    status = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(CampusError):
    status = 400


class NotFound(CampusError):
    status = 404


class PermissionMissing(CampusError):
    """The token lacks the scope a tool needs. Carries the link to the connected-apps card."""

    status = 403

    def __init__(self, message: str, *, scope: str, links: Sequence[PageLink] = ()) -> None:
        super().__init__(message)
        self.scope = scope
        self.links = tuple(links)


class RateLimited(CampusError):
    status = 429
