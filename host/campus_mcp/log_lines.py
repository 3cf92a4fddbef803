"""The server's log lines: one format for every logger (uvicorn's, the scheduler's, SQLAlchemy's
warnings, the MCP SDK's, ours), readable text or one JSON object a line, always in UTC.

``CAMPUS_MCP_LOG_FORMAT=json`` is for a log collector: each line parses on its own, with
``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the ``request_id`` of the request
being answered, and the fields a line names (a tool call's ``tool``, ``outcome``, ``duration_ms``,
``client_id``, ``student``). Text is the same lines for a person. Either way a warning that repeats
(the database or Redis down: one per request) is written once per interval, with how many were
folded into it, so an outage of a few seconds is a few lines, not hundreds.

A text line is one line, whatever it quotes. A message and its fields carry text a client chose
(a tool name it asked for, a Host header, a path), so the text format writes them escaped
(campus_mcp.logsafe: a newline as ``\\n``, an ANSI escape as ``\\x1b``, U+2028 and U+202E as
``\\u2028`` and ``\\u202e``): a client cannot start a line that looks like the server's, nor
colour or rewrite the reader's terminal. A traceback follows its line indented, each of its lines
escaped the same way, so every line that starts at the margin is one the server wrote. JSON needs
none of this (its encoder escapes), and keeps the text as it was.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from campus_mcp.logsafe import escaped

LogFormat = Literal["text", "json"]

# The request being answered, set by campus_mcp.request_ids for the length of one HTTP request.
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("campus_mcp_request_id", default=None)

# The fields a line may carry besides its message (passed as ``extra=``), in the order they print.
FIELDS = ("tool", "outcome", "duration_ms", "client_id", "student", "repeated")
REPEAT_SECONDS = 60.0


def new_request_id() -> str:
    return uuid.uuid4().hex


def _utc(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Context(logging.Filter):
    """Puts the current request id on every record (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class TextFormatter(logging.Formatter):
    """``2026-12-05T00:36:26.952Z WARNING campus_mcp.app [request id] message key=value``, one line
    with every client-chosen character escaped; a traceback below it, indented."""

    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        fields = " ".join(
            f"{name}={escaped(str(getattr(record, name)), limit=None)}" for name in FIELDS if hasattr(record, name)
        )
        message = escaped(record.getMessage(), limit=None)
        line = f"{_utc(record.created)} {record.levelname} {record.name}{f' [{escaped(rid)}]' if rid else ''} {message}"
        if fields:
            line += f" ({fields})"
        if record.exc_info:
            line += _indented(self.formatException(record.exc_info))
        if record.stack_info:
            line += _indented(self.formatStack(record.stack_info))
        return line


def _indented(text: str) -> str:
    """``text`` (a traceback) as lines below a log line: each indented and escaped, so an exception
    message a client chose cannot start a line at the margin, where only the server's lines start."""
    return "".join("\n    " + escaped(part, limit=None) for part in text.rstrip("\n").split("\n"))


class JsonFormatter(logging.Formatter):
    """One JSON object a line; a traceback is the ``exception`` field's text, never lines of its own."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _utc(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if rid := getattr(record, "request_id", None):
            entry["request_id"] = rid
        for name in FIELDS:
            if hasattr(record, name):
                entry[name] = getattr(record, name)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class RepeatFolder(logging.Filter):
    """A warning written again within ``interval`` seconds (the same logger and the same message
    template, whatever its arguments) is held back and counted; the next one after the interval
    is written with ``repeated``, how many were held back since the last one written."""

    def __init__(self, interval: float = REPEAT_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self.clock = clock
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        key = (record.name, str(record.msg))
        now = self.clock()
        written, held = self._seen.get(key, (float("-inf"), 0))
        if now - written < self.interval:
            self._seen[key] = (written, held + 1)
            return False
        if len(self._seen) > 1000:  # bounded: a message template is code, but a plugin's could vary
            self._seen.clear()
        self._seen[key] = (now, 0)
        if held:
            record.repeated = held
        return True


def _ours(handler: logging.Handler) -> bool:
    return isinstance(handler.formatter, TextFormatter | JsonFormatter)


def configure(log_format: LogFormat = "text", level: int = logging.INFO, *, access_log: bool = True) -> None:
    """Every logger's lines on stderr in ``log_format``, for the long-running commands.

    A root logger the operator set up already (a handler that is not ours) is left alone, as
    ``logging.basicConfig`` would. uvicorn's and Litestar's loggers lose their own handlers and
    pass their lines on to the root logger, so there is one format in the stream. ``access_log``
    off (``CAMPUS_MCP_ACCESS_LOG=false``): uvicorn's per-request logger passes nothing on, so
    uvicorn, which asks whether it has a handler, writes no line. This runs in each worker of
    ``serve --workers N`` after uvicorn set up that worker's logging, so it must say it here too."""
    root = logging.getLogger()
    if any(not _ours(handler) for handler in root.handlers):
        return
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_Context())
    handler.addFilter(RepeatFolder())
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    # Python warnings (SQLAlchemy's among them) become log lines of the "py.warnings" logger.
    logging.captureWarnings(True)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi", "litestar"):
        logger = logging.getLogger(name)
        for own in list(logger.handlers):
            logger.removeHandler(own)
        logger.propagate = access_log or name != "uvicorn.access"
