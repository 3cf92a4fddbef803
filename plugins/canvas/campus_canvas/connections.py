"""A student's Canvas connection: made from Canvas's token answer, its tokens sealed at rest, and the
one link that starts it.

:func:`connect_link` is the one place the family says where a student connects: the tools' "connect
first" answers, the reconnect answers and the Settings page all use it, and a client that can open a
link for the student (URL-mode elicitation, SEP-1036) can be offered the same link later.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from campus_mcp import CampusError, SecretUnreadable, Settings, open_secret, seal_secret, utcnow
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas.models import CanvasConnection
from campus_canvas.oauth import TokenAnswer

CANVAS_PAGE = "/dashboard/canvas"
CALLBACK_PATH = f"{CANVAS_PAGE}/callback"
PURPOSE = "canvas-tokens"
Sessions = Callable[[], AbstractAsyncContextManager[AsyncSession]]


def connect_link(settings: Settings) -> str:
    """Where the student connects (or reconnects) their Canvas account: the family's dashboard page."""
    return f"{settings.base_url}{CANVAS_PAGE}"


def redirect_uri(settings: Settings) -> str:
    """Where Canvas sends the student back: the developer key's Redirect URI (docs/canvas.md)."""
    return f"{settings.base_url}{CALLBACK_PATH}"


class NotConnected(CampusError):
    """The student has not connected Canvas: the answer is the link, not a failure."""

    status = 409

    def __init__(self, settings: Settings) -> None:
        super().__init__(
            "You have not connected your Canvas account yet, so your Canvas coursework cannot be read. Connect it "
            f"once at {connect_link(settings)} (sign in to Canvas and allow access), then ask again. Give the "
            "student this link."
        )


class Reconnect(CampusError):
    """The connection stopped working: revoked in Canvas, refused on refresh, or unreadable."""

    status = 409

    def __init__(self, settings: Settings) -> None:
        super().__init__(
            "Your Canvas connection stopped working (it was removed in Canvas, or Canvas no longer takes it). "
            f"Connect it again at {connect_link(settings)}, then ask again. Give the student this link."
        )


def _owner(student_id: int) -> str:
    return f"student:{student_id}"


def seal(settings: Settings, student_id: int, token: str) -> str:
    return seal_secret(settings, token, purpose=PURPOSE, bound_to=_owner(student_id))


def unseal(settings: Settings, student_id: int, sealed: str) -> str:
    return open_secret(settings, sealed, purpose=PURPOSE, bound_to=_owner(student_id))


async def save_connection(
    session: AsyncSession, settings: Settings, student_id: int, answer: TokenAnswer, scopes: str
) -> CanvasConnection:
    """The student's connection from a code exchange: a new one, or the old one made new (the
    calendar-feed choice is kept). The caller commits."""
    now = utcnow()
    row = await session.get(CanvasConnection, student_id)
    if row is None:
        row = CanvasConnection(student_id=student_id, feed_due_work=False)
        session.add(row)
    row.canvas_user_id = str(answer.user.id) if answer.user else ""
    row.canvas_user_name = (answer.user.name if answer.user else "")[:200]
    row.access_token = seal(settings, student_id, answer.access_token)
    row.refresh_token = seal(settings, student_id, answer.refresh_token) if answer.refresh_token else None
    row.expires_at = answer.expires_at(now)
    row.scopes = scopes
    row.connected_at = now
    row.refreshed_at = None
    row.lost_at = None
    row.demo = False
    return row


def save_refresh(row: CanvasConnection, settings: Settings, answer: TokenAnswer) -> None:
    """A refreshed access token (Canvas keeps the refresh token as it was)."""
    now = utcnow()
    row.access_token = seal(settings, row.student_id, answer.access_token)
    if answer.refresh_token:
        row.refresh_token = seal(settings, row.student_id, answer.refresh_token)
    row.expires_at = answer.expires_at(now)
    row.refreshed_at = now


def mark_lost(row: CanvasConnection) -> None:
    """Canvas no longer takes the tokens: forget them, remember when, so the student is told to reconnect."""
    row.access_token = None
    row.refresh_token = None
    row.lost_at = utcnow()


def tokens_of(settings: Settings, row: CanvasConnection) -> tuple[str, str | None] | None:
    """The access and refresh tokens, or None when they cannot be opened (the deployment key changed)."""
    if row.access_token is None:
        return None
    try:
        access = unseal(settings, row.student_id, row.access_token)
        refresh = unseal(settings, row.student_id, row.refresh_token) if row.refresh_token else None
    except SecretUnreadable:
        return None
    return access, refresh


async def forget(session: AsyncSession, student_id: int) -> None:
    await session.execute(delete(CanvasConnection).where(CanvasConnection.student_id == student_id))
