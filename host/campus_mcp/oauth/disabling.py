"""Disabling a student: no way in, and nothing they hold keeps working.

``campus-mcp students disable`` in one transaction: the student is marked disabled (every kind of
sign-in refuses them), every browser session ends (the session generation moves on), every OAuth
access and refresh token and every personal access token is revoked, and each connection a plugin
lists beside the apps (the calendar feed) is ended. ``enable`` lets them sign in again; what was
revoked stays revoked (they connect their apps again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.base.db import utcnow
from campus_mcp.oauth.accounts import Student, end_sessions
from campus_mcp.oauth.models import OAuthToken
from campus_mcp.oauth.personal_tokens import PersonalToken
from campus_mcp.plugin.contributions import Connection


@dataclass
class Revoked:
    """What a disable ended, for the administrator's confirmation."""

    oauth_tokens: int = 0
    personal_tokens: int = 0
    connections: list[str] = field(default_factory=list)


async def disable(session: AsyncSession, student: Student, connections: Sequence[Connection]) -> Revoked:
    """Disable ``student`` and end everything they hold (in the caller's transaction)."""
    now = utcnow()
    student.disabled = True
    await end_sessions(session, student.id)
    oauth = await session.execute(
        update(OAuthToken)
        .where(OAuthToken.user_id == student.id, OAuthToken.revoked_at.is_(None))
        .values(revoked_at=now)
        .execution_options(synchronize_session=False)
    )
    personal = await session.execute(
        update(PersonalToken)
        .where(PersonalToken.user_id == student.id, PersonalToken.revoked_at.is_(None))
        .values(revoked_at=now)
        .execution_options(synchronize_session=False)
    )
    revoked = Revoked(oauth_tokens=_count(oauth), personal_tokens=_count(personal))
    for connection in connections:
        if connection.end is not None and await connection.end(session, student.id):
            revoked.connections.append(connection.title)
    return revoked


def _count(result: object) -> int:
    return int(getattr(result, "rowcount", 0) or 0)
