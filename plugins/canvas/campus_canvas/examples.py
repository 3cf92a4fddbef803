"""The contract's calls of the Canvas tools: on the demo campus (the demo Canvas, as demo student 1,
whom the demo loader connected) and on sparse data (a student connected to the demo Canvas's awkward
account: a course with no name or scores, work with no title, due time or points, an announcement
with no author or message)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from campus_mcp import ToolExample, utcnow
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas.models import CanvasConnection

SPARSE_ACCOUNT = "sparse"


async def connect_to_the_sparse_account(session: AsyncSession) -> None:
    """Every student of the sparse campus (the example's one) connected to the awkward demo account."""
    for (student_id,) in await session.execute(text("SELECT id FROM students")):
        session.add(
            CanvasConnection(
                student_id=int(student_id), canvas_user_id=SPARSE_ACCOUNT, connected_at=utcnow(), demo=True
            )
        )
    await session.commit()


def demo_example(arguments: Mapping[str, Any]) -> ToolExample:
    return ToolExample(tool="", arguments=arguments, user="student1")


def sparse_example(arguments: Mapping[str, Any]) -> ToolExample:
    return ToolExample(
        tool="", arguments=arguments, data="sparse", prepare=connect_to_the_sparse_account, user="student1"
    )
