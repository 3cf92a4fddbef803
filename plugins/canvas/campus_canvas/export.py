"""What the Canvas family holds about one student, for their export (``register_student_data``): the
connection's facts, never a token (they are the student's Canvas access, not their data)."""

from __future__ import annotations

from typing import Any

from campus_mcp import StudentData
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas.models import CanvasConnection


async def canvas_connection_of(session: AsyncSession, student_id: int) -> dict[str, Any] | None:
    row = await session.get(CanvasConnection, student_id)
    if row is None:
        return None
    return {
        "canvas_user_id": row.canvas_user_id,
        "canvas_user_name": row.canvas_user_name,
        "connected_at": row.connected_at.isoformat(),
        "token_refreshed_at": row.refreshed_at.isoformat() if row.refreshed_at else None,
        "token_expires_at": row.expires_at.isoformat() if row.expires_at else None,
        "stopped_working_at": row.lost_at.isoformat() if row.lost_at else None,
        "scopes": row.scopes.split(),
        "due_work_in_calendar_feed": row.feed_due_work,
        "demo": row.demo,
    }


STUDENT_DATA = [
    StudentData(
        key="canvas",
        description="The Canvas account connected (who in Canvas, since when, the scopes asked for); no token.",
        read=canvas_connection_of,
        tables=("canvas_connections",),
    )
]
