"""The link in a seat watch's e-mail that stops the watch, signed so that it needs no sign-in.

The link names the watch and carries an HMAC of the watch's id, its student and the moment it was
made, under a key derived from the deployment's seal key for this purpose only: it stops that one
watch and nothing else, and a watch made again later (a new ``created_at``) is not stopped by an
old e-mail's link. Opening the link shows a page with a Stop button (a mail scanner that follows
links stops nothing); the button, and a mail client's one-click (RFC 8058), POST it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import datetime
from urllib.parse import urlencode

from campus_mcp import Settings

WATCHES_PAGE = "/dashboard/watches"
STOP_PAGE = f"{WATCHES_PAGE}/stop"
_LABEL = b"campus-mcp/seat-watch-stop/v1\0"


def _signature(settings: Settings, watch_id: int, student_id: int, created_at: datetime) -> str:
    key = hmac.new(settings.seal_key(), _LABEL, hashlib.sha256).digest()
    signed = f"{watch_id}.{student_id}.{created_at.isoformat()}".encode()
    return base64.urlsafe_b64encode(hmac.new(key, signed, hashlib.sha256).digest()[:24]).decode().rstrip("=")


def stop_token(settings: Settings, watch_id: int, student_id: int, created_at: datetime) -> str:
    return f"{watch_id}.{_signature(settings, watch_id, student_id, created_at)}"


def stop_link(settings: Settings, watch_id: int, student_id: int, created_at: datetime) -> str:
    return f"{settings.base_url}{STOP_PAGE}?{urlencode({'t': stop_token(settings, watch_id, student_id, created_at)})}"


def token_watch_id(token: str) -> int | None:
    """The watch a token names (to look it up), before its signature is checked."""
    head, dot, _signature_part = token.partition(".")
    return int(head) if dot and head.isdigit() and len(head) < 12 else None


def token_matches(settings: Settings, token: str, watch_id: int, student_id: int, created_at: datetime) -> bool:
    return hmac.compare_digest(token.encode(), stop_token(settings, watch_id, student_id, created_at).encode())
