"""The Canvas connection as Settings lists it beside the connected apps (``register_connections``).

Connected: who in Canvas, since when, with a link to the Canvas page that disconnects it; it reads
none of the student's data here (``reads=False``), so it is not counted among the apps that do. Not
connected yet: listed as one the student can connect, with the link to start (``connected=False``).
A disabled student's connection is ended as Disconnect ends it: revoked at Canvas, forgotten here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from campus_mcp import Connection, ConnectionState, Settings
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas.connections import CANVAS_PAGE
from campus_canvas.disconnect import end_connection
from campus_canvas.models import CanvasConnection
from campus_canvas.settings import CanvasSettings

TITLE = "Canvas"


async def describe_canvas(session: AsyncSession, student_id: int) -> ConnectionState:
    row = await session.get(CanvasConnection, student_id)
    if row is None:
        return ConnectionState(
            summary="Not connected. Connect your Canvas account so your assistant can tell you what is due and your grades.",
            manage_url=CANVAS_PAGE,
            connected=False,
        )
    if row.lost_at is not None:
        return ConnectionState(
            summary=f"Stopped working on {row.lost_at:%Y-%m-%d} (removed in Canvas): connect it again.",
            manage_url=CANVAS_PAGE,
            reads=False,
        )
    who = row.canvas_user_name or "your Canvas account"
    return ConnectionState(
        summary=f"Connected as {who} since {row.connected_at:%Y-%m-%d}; your assistant reads your Canvas coursework with it.",
        manage_url=CANVAS_PAGE,
        # It reads none of the student's data here: this server reads their Canvas for them.
        reads=False,
    )


def canvas_connection(settings: Settings, plugin_settings: CanvasSettings) -> Connection:
    def ender() -> Callable[[AsyncSession, int], Awaitable[bool]]:
        async def end(session: AsyncSession, student_id: int) -> bool:
            return (await end_connection(session, settings, plugin_settings, student_id)).was_connected

        return end

    return Connection(title=TITLE, describe=describe_canvas, end=ender())
