"""Untrusted text made safe to write into a log line or an error message.

A client controls some strings we repeat (a GraphQL ``operationName``, a query parameter). Written
raw, a newline in one starts a line of its own, and a reader of the log, or a tool that parses it,
takes the client's words for the server's. ``escaped`` writes every character that is not
printable the way Python's ``repr`` does, so the text stays on its one line and says what it was.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
LIMIT = 200


def _escape(character: str) -> str:
    if character in _NAMED:
        return _NAMED[character]
    if character.isprintable():
        return character
    code = ord(character)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escaped(text: str, *, limit: int = LIMIT) -> str:
    """``text`` on one line: control and format characters as escapes (a newline as ``\\n``, a
    backslash doubled so an escape cannot be faked), and cut after ``limit`` characters."""
    cut = text[:limit]
    return "".join(_escape(character) for character in cut) + ("…" if len(text) > limit else "")
