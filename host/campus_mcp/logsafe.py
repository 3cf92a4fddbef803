"""Untrusted text made safe to write into a log line, an error message or a row of a command's table.

A client controls some strings we repeat (a GraphQL ``operationName``, a query parameter, a tool
name it asked for, the ``client_name`` it registered). Written raw, a newline in one starts a line
of its own, and a reader of the log, or a tool that parses it, takes the client's words for the
server's; an ANSI escape rewrites the reader's terminal; a right-to-left override makes the words
read as others. ``escaped`` writes every character that is not printable the way Python's ``repr``
does, so the text stays on its one line and says what it was. The text log format
(campus_mcp.log_lines) and the command-line tables (``campus-mcp audit``, ``students list``,
``jobs list``) write through it.
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


def escaped(text: str, *, limit: int | None = LIMIT) -> str:
    """``text`` on one line: control and format characters as escapes (a newline as ``\\n``, a
    backslash doubled so an escape cannot be faked), and cut after ``limit`` characters (None:
    never cut)."""
    cut = text if limit is None else text[:limit]
    # Most text has nothing to escape: str.isprintable runs in C, the loop only when it must.
    safe = cut if cut.isprintable() and "\\" not in cut else "".join(_escape(character) for character in cut)
    return safe + ("…" if limit is not None and len(text) > limit else "")


def cell(value: object) -> str:
    """One cell of a command's text table: the value whole, on one line, escaped."""
    return escaped(str(value), limit=None)
