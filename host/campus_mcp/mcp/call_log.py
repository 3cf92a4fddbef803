"""One log line per ``tools/call``: the tool, its outcome, how long it took, the client, and a
pseudonymous key of the student, never a token, a name or the arguments.

The student key is a keyed hash of the student's id (the key derived from
``CAMPUS_MCP_SECRET_KEY``), so the lines of one student can be followed through the log without the
log saying who the student is; a reader without the secret key cannot tell.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import time

from campus_mcp.base.metrics import tool_outcome
from campus_mcp.plugin.principal import Principal

log = logging.getLogger("campus_mcp.tool_calls")


def student_key(log_key: bytes, user_id: int | None) -> str | None:
    if user_id is None:
        return None
    return _student_key(log_key, user_id)


@functools.lru_cache(maxsize=4096)
def _student_key(log_key: bytes, user_id: int) -> str:
    # An HMAC per logged call was ~2% of a student tool call's CPU on /api/mcp; a student's calls
    # come in runs, and the key never changes.
    return hmac.new(log_key, str(user_id).encode(), hashlib.sha256).hexdigest()[:16]


def log_key_of(seal_key: bytes) -> bytes:
    """A key of its own for the student keys (not the seal key itself, so a log key that leaks
    seals nothing)."""
    return hashlib.sha256(b"campus-mcp log student key\0" + seal_key).digest()


def log_tool_call(tool: str, started: float, principal: Principal, log_key: bytes) -> None:
    outcome = tool_outcome.get() or "error"
    log.info(
        "tools/call %s: %s",
        tool,
        outcome,
        extra={
            "tool": tool,
            "outcome": outcome,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            "client_id": principal.client_id,
            "student": student_key(log_key, principal.user_id),
        },
    )
