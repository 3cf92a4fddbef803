"""The demo campus's Canvas connections: demo students 1 to 4 are connected to the demo Canvas
(``demo_canvas.py``); student 5 is not, so the demo shows the answer with the link to connect. A
demo campus whose operator configured a real Canvas gets none: its students connect themselves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from campus_mcp import utcnow
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas.models import CanvasConnection
from campus_canvas.settings import CanvasSettings, is_demo

CONNECTED_DEMO_STUDENTS = range(1, 5)


def demo_loader(plugin_settings: CanvasSettings) -> Callable[[AsyncSession, int], Awaitable[None]]:
    async def load_demo_connections(session: AsyncSession, scale: int) -> None:
        if is_demo(plugin_settings):
            await connect_demo_students(session)

    return load_demo_connections


async def connect_demo_students(session: AsyncSession) -> None:
    # Demo student numbers are their ids (the host's demo loader); a smaller demo campus keeps the ones it has.
    present = {int(row[0]) for row in await session.execute(text("SELECT id FROM students WHERE is_demo"))}
    now = utcnow()
    for student_id in CONNECTED_DEMO_STUDENTS:
        if student_id in present:
            session.add(
                CanvasConnection(
                    student_id=student_id,
                    canvas_user_id=f"demo-{student_id}",
                    canvas_user_name=f"Demo Student {student_id}",
                    connected_at=now,
                    demo=True,
                )
            )
    await session.flush()
