"""Ending a student's Canvas connection: told to Canvas, then forgotten here.

Disconnect (the Canvas page) and a disabled student (``campus-mcp students disable``, through the
connection's ``end``) both come here. Canvas is asked to revoke the token (``DELETE
/login/oauth2/token``, which ends its refresh token too); an access token that has expired is first
refreshed, since Canvas takes only a live one. The row goes whatever Canvas answered: a student who
disconnects is disconnected here at once, and is told when Canvas could not be reached, so they can
remove the app under Approved Integrations in their Canvas settings themselves.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from campus_mcp import CampusError, Settings, utcnow
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas import oauth
from campus_canvas.connections import forget, tokens_of
from campus_canvas.models import CanvasConnection
from campus_canvas.reader import open_client
from campus_canvas.settings import CanvasSettings


@dataclasses.dataclass(frozen=True)
class Ended:
    was_connected: bool
    canvas_told: bool  # Canvas revoked the token (or there was none left to revoke)


async def end_connection(
    session: AsyncSession, settings: Settings, plugin_settings: CanvasSettings, student_id: int
) -> Ended:
    """Revoke at Canvas and delete the row, in the caller's transaction (the caller commits)."""
    row = await session.get(CanvasConnection, student_id)
    if row is None:
        return Ended(was_connected=False, canvas_told=True)
    told = True
    tokens = None if row.demo else tokens_of(settings, row)
    if tokens is not None:
        told = await _revoke(settings, plugin_settings, row, *tokens)
    await forget(session, student_id)
    return Ended(was_connected=True, canvas_told=told)


async def _revoke(
    settings: Settings, plugin_settings: CanvasSettings, row: CanvasConnection, access: str, refresh: str | None
) -> bool:
    async with open_client(plugin_settings) as client:
        if refresh is not None and (row.expires_at is None or row.expires_at - utcnow() < timedelta(minutes=1)):
            try:
                access = (await oauth.refresh(client, plugin_settings, refresh)).access_token
            except oauth.GrantRefused:
                return True  # Canvas no longer knows the token: revoked there already
            except CampusError:
                return False  # unreachable: the student is told to remove it in Canvas
        return await oauth.revoke(client, plugin_settings, access)
