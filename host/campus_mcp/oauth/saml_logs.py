"""pysaml2's log lines without the SAML documents it quotes in them.

pysaml2 writes whole documents into its ERROR lines and the exceptions it logs: a Response whose
signature breaks the SAML profile (``'xml document': '<Response ...>'``, the whole answer), a
decrypted assertion whose signature fails (``Failed to verify signature on '<Assertion ...>'``).
A document carries the student's attributes (e-mail, name, affiliation, student id) and, until it
expires, is a bearer credential: it must not reach a log. Its INFO and DEBUG lines (the NameID,
every assertion received) are not written at all.

Every ``saml2.*`` logger's record reaches the ``saml2`` logger's one handler, which cuts the
documents and encoded blobs out of the message, drops the traceback (its exception text is the
same document; the exception's type stays in the line) and hands the record on to the root
logger's handlers: the server's log format, or an operator's own logging. The ``saml2`` logger
does not propagate, so no handler sees a record before this one. A logging filter on ``saml2``
would not do: a logger's filters do not see its children's records.
"""

from __future__ import annotations

import logging
import re

LOGGER = "saml2"
# From the first tag to the last '>': the document and everything quoted inside it.
_DOCUMENT = re.compile(r"<[?!A-Za-z_][\s\S]*>")
# Base64 of a document, a signature or a certificate (a long run without spaces).
_ENCODED = re.compile(r"[A-Za-z0-9+/=_-]{100,}")
MAX_CHARS = 1000


def redacted(text: str) -> str:
    """``text`` without SAML documents and encoded blobs, at most ``MAX_CHARS`` long."""
    text = _DOCUMENT.sub("[SAML document removed]", text)
    text = _ENCODED.sub("[encoded data removed]", text)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "... [cut]"


class _Redacting(logging.Handler):
    """Redacts a pysaml2 record, then lets the root logger's handlers write it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = redacted(record.getMessage())
        except Exception:  # a message whose arguments do not format: say so, quote nothing
            message = "(a pysaml2 message that could not be read)"
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__})"
        record.msg, record.args = message, None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        logging.getLogger().handle(record)


def quiet_saml_logs() -> None:
    """Route pysaml2's warnings and errors through the redaction (once; calling again is harmless)."""
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.WARNING)
    if not any(isinstance(handler, _Redacting) for handler in logger.handlers):
        logger.addHandler(_Redacting())
    logger.propagate = False
