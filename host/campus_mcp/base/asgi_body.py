"""The body of an ASGI request, read at most to a limit, and handed out again to whoever reads it next.

The MCP endpoint reads a body before the SDK does (the fast path answers a read from it), and the
limits middleware peeks at one to count a tools/call; both must not hold more than the SDK would
have accepted, and both must leave the body for the next reader.
"""

from __future__ import annotations

from typing import Any

from litestar.types import Receive, Scope


def declared_length(scope: Scope) -> int:
    """The request's Content-Length, or a number past any limit when it has none (chunked)."""
    for key, value in scope["headers"]:
        if key.lower() == b"content-length" and value.isdigit():
            return int(value)
    return 1 << 62


class BodyTooLarge(Exception):
    """The request body is over the SDK's limit; nothing more of it is read."""


async def buffered(scope: Scope, receive: Receive, limit: int) -> tuple[bytes, Receive]:
    """Read the request body, at most ``limit`` bytes, and a receive that hands it out again.

    The limit is the SDK's own (``max_request_body_size``), checked the way its body-limit
    middleware checks it: a declared Content-Length over it is refused before reading, and a
    chunked body is refused as soon as it crosses it, so a client cannot make the endpoint hold
    more than the SDK would have accepted.
    """
    for key, value in scope["headers"]:
        if key.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            raise BodyTooLarge
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > limit:
            raise BodyTooLarge
        body.extend(chunk)
        if not message.get("more_body", False):
            break
    data = bytes(body)
    pending = [{"type": "http.request", "body": data, "more_body": False}]

    async def replay() -> Any:
        return pending.pop() if pending else await receive()

    return data, replay
