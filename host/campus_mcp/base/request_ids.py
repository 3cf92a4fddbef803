"""A request id on every answer and every log line written while it is answered.

The id comes from the ``X-Request-ID`` header when a trusted proxy (``CAMPUS_MCP_TRUSTED_PROXIES``)
sends one, so a line of nginx's log and ours name the same request; anyone else's header is
ignored (a client could otherwise plant a line's id, or another request's), and a new id is made.
The answer carries it back in its own ``X-Request-ID`` header, for a support question to quote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from campus_mcp.base.addresses import Network, within
from campus_mcp.base.log_lines import new_request_id, request_id

HEADER = b"x-request-id"
# What a proxy's id may look like (nginx's $request_id is 32 hex digits; a UUID has dashes): a
# longer or stranger one is replaced, so a log line never carries a client's text.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def _from_proxy(scope: Scope, trusted: Sequence[Network]) -> str | None:
    client = scope.get("client")
    if not trusted or client is None or within(client[0], trusted) is None:
        return None
    for name, value in scope["headers"]:
        if name == HEADER:
            text = value.decode("latin-1")
            return text if _ACCEPTED.fullmatch(text) else None
    return None


def with_request_ids(app: ASGIApp, trusted: Sequence[Network]) -> ASGIApp:
    """``app`` with an id set for each HTTP request and sent back in its answer: around the whole
    app, so an answer no route made (a 404) carries one too."""

    async def with_id(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        rid = _from_proxy(scope, trusted) or new_request_id()
        token = request_id.set(rid)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != HEADER]
                message = {**message, "headers": [*headers, (HEADER, rid.encode())]}
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            request_id.reset(token)

    return with_id
