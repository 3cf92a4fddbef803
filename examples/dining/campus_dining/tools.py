"""The dining MCP tools. Each handler is one call to the query its REST route calls."""

from __future__ import annotations

from campus_mcp import RouteRef, Tool, ToolContext

from campus_dining import queries
from campus_dining.schemas import DiningHallInfo, DiningHallList, HallQuery, HallSlug

SCOPE = "dining"


async def list_dining_halls(context: ToolContext, args: HallQuery) -> DiningHallList:
    async with context.session() as session:
        return await queries.list_halls(session, args)


async def get_dining_hall(context: ToolContext, args: HallSlug) -> DiningHallInfo:
    async with context.session() as session:
        return await queries.get_hall(session, args)


TOOLS = [
    Tool(
        name="list_dining_halls",
        title="Dining halls and hours",
        description=(
            "Lists the campus dining halls and cafés with their weekly opening hours (campus time zone). "
            "Use it for: 'Is anything open for food on Sunday?', 'When does the dining hall close tonight?', "
            "'Where can I get coffee near the library?'. Pass open_on to keep only the halls open on one weekday. "
            "Do not use it for meal plans, menus or prices: this server does not have them."
        ),
        scope=SCOPE,
        input_model=HallQuery,
        output_model=DiningHallList,
        handler=list_dining_halls,
        mirrors=(RouteRef(method="GET", path="/api/v1/dining/halls"),),
    ),
    Tool(
        name="get_dining_hall",
        title="One dining hall",
        description=(
            "Gives one dining hall's building, description and weekly opening hours, by the slug that "
            "list_dining_halls returns. Use it for: 'What are the Library Café's hours?'. "
            "Do not use it to find a hall by name or day: call list_dining_halls for that."
        ),
        scope=SCOPE,
        input_model=HallSlug,
        output_model=DiningHallInfo,
        handler=get_dining_hall,
        mirrors=(RouteRef(method="GET", path="/api/v1/dining/halls/{slug}"),),
    ),
]
