"""A campus sign-in service on loopback that fails as a real one does on a bad day: nothing listens
on its port (``refuse``), it cuts each connection once the request has arrived (``drop``), or it
takes the request and never answers (``hang``). Over TLS when given a certificate, for a fetch
that must be https (SAML metadata through the guard)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

from campus_mcp.oauth.testkit import free_port

FAULTS = ("refuse", "drop", "hang")


@contextlib.asynccontextmanager
async def faulty_server(
    fault: str, *, tls: tuple[Path, Path] | None = None, port: int | None = None
) -> AsyncIterator[int]:
    """The port of a server failing with ``fault`` (one of ``FAULTS``), ``port`` if given (where a
    server that behaved was a moment ago); ``tls``: (cert, key)."""
    port = port or free_port()
    if fault == "refuse":
        yield port  # nobody listens there: the connection is refused
        return

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ssl.SSLError):
            await reader.read(65536)  # the request
            if fault == "hang":
                await reader.read()  # until the campus gives up and closes its side
        writer.close()

    context = None
    if tls is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
    server = await asyncio.start_server(answer, "127.0.0.1", port, ssl=context)
    async with server:
        yield port
