"""Errors a tool or a route raises on purpose. Each message says what was wrong and what to do.

Tools turn them into MCP tool errors (``isError: true``), routes into JSON problem responses with
the matching status. Anything else that escapes a handler is logged with its traceback on the
server and answered with a short generic message: no stack trace reaches a client.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from campus_mcp.plugin.links import PageLink


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


class ChangedMeanwhile(CampusError):
    """Another request changed the same data at the same moment; nothing was written. Say what to do."""

    status = 409


class PermissionMissing(CampusError):
    """The token lacks the scope a tool needs. Carries the link to the connected-apps card."""

    status = 403

    def __init__(self, message: str, *, scope: str, links: Sequence[PageLink] = ()) -> None:
        super().__init__(message)
        self.scope = scope
        self.links = tuple(links)


class SignInNeeded(PermissionMissing):
    """A REST call that needs a student, made with no credentials at all: 401, not 403 (RFC 9110:
    nobody was authenticated, so no permission could be missing), with the challenge a 401 must
    carry. The REST API takes the dashboard's session or a personal access token."""

    status = 401
    challenge = 'Bearer realm="campus-mcp"'


# --- quoting what the caller sent ------------------------------------------------------------
# An error that quotes an argument whole answers a 1 MB argument with a 1 MB error (issue 9.7):
# the size of the answer would be the caller's choice. A quote keeps a short prefix and the length.
QUOTE_LIMIT = 80
# A run this long with no space is a pasted value, not a word of ours (our URLs are shorter).
_LONG_RUN = re.compile(rf"\S{{{2 * QUOTE_LIMIT + 40},}}")
# The last resort, for a value a validator changed (upper-cased, trimmed) before quoting it.
MAX_MESSAGE_LENGTH = 4000


def shortened(value: str, limit: int = QUOTE_LIMIT) -> str:
    """``value`` itself when short, else its first ``limit`` characters and how long it was."""
    return value if len(value) <= limit else f"{value[:limit]}… ({len(value)} characters)"


def quote_input(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A value the caller sent, quoted for an error message: ``'COMP 2350'``, or a short prefix."""
    text = value if isinstance(value, str) else repr(value)
    return f"'{shortened(text, limit)}'" if len(text) > limit else repr(text)


def _long_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        if len(value) > QUOTE_LIMIT:
            yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _long_strings(key)
            yield from _long_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _long_strings(item)


def without_echoes(message: str, sent: object) -> str:
    """``message`` with every long string of ``sent`` (the arguments) cut to a short quote.

    Messages come from validators and queries of every plugin, so the host cuts them here rather
    than trusting each to quote carefully.
    """
    for value in sorted(set(_long_strings(sent)), key=len, reverse=True):
        for form in (value, repr(value)[1:-1]):  # as sent, and as !r escapes it
            if form in message:
                message = message.replace(form, shortened(value))
    message = _LONG_RUN.sub(lambda match: shortened(match.group()), message)
    if len(message) > MAX_MESSAGE_LENGTH:
        message = message[: MAX_MESSAGE_LENGTH - 400] + " … " + message[-400:]
    return message
