"""A deadline for a client's request headers, which uvicorn does not have.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but a connection that
sends nothing, or half a request's headers, is kept for as long as the client likes: 3,000
connections each holding half a request stayed open (issue 35, point 15), each a file descriptor
and a protocol object, until the process runs out of either ("slowloris"). :class:`HeaderDeadline`
is uvicorn's own httptools protocol with one rule added: a request's headers arrive whole within
``header_seconds`` of the connection opening (the first request) or of the request's first byte (a
later one on a kept-alive connection; the idle time before it is ``timeout_keep_alive``'s), or the
connection is closed, with ``408 Request Timeout`` when part of a request had come. The body is
the app's business (each route reads a bounded body), as is a response under way.

``serve`` passes it to uvicorn as the HTTP protocol (``http=``), with the deadline bound by
:func:`header_deadline`, so uvicorn's workers, started in processes of their own, get it too.
The hooks it adds to are the parser's callbacks and asyncio's protocol methods, the interface
uvicorn's protocol implements, so a new uvicorn keeps them.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

TOO_SLOW = b"The request's headers did not arrive in time; send the whole request at once."
_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(TOO_SLOW)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + TOO_SLOW
)


class HeaderDeadline(HttpToolsProtocol):
    """uvicorn's httptools protocol that closes a connection whose request headers are late."""

    def __init__(self, *args: Any, header_seconds: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_seconds = header_seconds
        self._clock: asyncio.TimerHandle | None = None
        self._request_begun = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_clock()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._request_begun = True
        self._start_clock()  # a later request on this connection; the first one's clock runs already

    def on_headers_complete(self) -> None:
        self._stop_clock()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        super().connection_lost(exc)

    def _start_clock(self) -> None:
        if self._clock is None:
            self._clock = self.loop.call_later(self.header_seconds, self._headers_late)

    def _stop_clock(self) -> None:
        self._request_begun = False
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None

    def _headers_late(self) -> None:
        self._clock = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # An answer is still being sent on this connection (the client pipelined the next
            # request): the next request waits its turn, its clock starts again.
            self._start_clock()
            return
        if self._request_begun:
            self.transport.write(_RESPONSE)
        # Nothing of a request came: closed without a word, as nginx does.
        self.transport.close()


def header_deadline(seconds: float) -> Any:
    """The ``http=`` of uvicorn's config: :class:`HeaderDeadline` with ``seconds``. A partial of a
    module-level class, so it reaches worker processes (uvicorn pickles its config for them)."""
    return functools.partial(HeaderDeadline, header_seconds=seconds)
