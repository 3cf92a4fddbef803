"""Example calls of the dining tools; the host's contract tests run them through a real MCP client.

The demo examples run on the demo campus. The sparse ones run on an empty database that
``prepare`` fills with the awkward case: a hall the feed says nothing about but its name.
"""

from __future__ import annotations

from campus_mcp import ToolExample, utcnow
from sqlalchemy.ext.asyncio import AsyncSession

from campus_dining.models import DiningHall

SPARSE_SLUG = "pop-up-cart"


async def add_bare_hall(session: AsyncSession) -> None:
    session.add(DiningHall(slug=SPARSE_SLUG, name="Pop-up cart", building=None, description=None, updated_at=utcnow()))
    await session.commit()


EXAMPLES = [
    ToolExample(tool="list_dining_halls", arguments={}, user=None),
    ToolExample(tool="list_dining_halls", arguments={"open_on": "sunday"}, user=None),
    ToolExample(tool="get_dining_hall", arguments={"slug": "library-cafe"}, user=None),
    ToolExample(tool="list_dining_halls", arguments={}, data="sparse", prepare=add_bare_hall, user=None),
    ToolExample(
        tool="get_dining_hall", arguments={"slug": SPARSE_SLUG}, data="sparse", prepare=add_bare_hall, user=None
    ),
]
