"""The dining operations, each declared once: the MCP tool and its REST twin are made from it
(``campus_mcp.Operation``), so both validate with the same model and make the same one call."""

from __future__ import annotations

from campus_mcp import Operation, Tool, ToolContext, operation_tools

from campus_dining import queries
from campus_dining.schemas import DiningHallInfo, DiningHallList, HallQuery, HallSlug

SCOPE = "dining"
API = "/api/v1/dining"


async def list_dining_halls(context: ToolContext, args: HallQuery) -> DiningHallList:
    async with context.session() as session:
        return await queries.list_halls(session, args)


async def get_dining_hall(context: ToolContext, args: HallSlug) -> DiningHallInfo:
    async with context.session() as session:
        return await queries.get_hall(session, args)


OPERATIONS = [
    Operation(
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
        run=list_dining_halls,
        method="GET",
        path=f"{API}/halls",  # ?open_on=sunday
    ),
    Operation(
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
        run=get_dining_hall,
        method="GET",
        path=f"{API}/halls/{{slug}}",  # 404 with the way to find slugs when there is none
    ),
]

TOOLS: list[Tool] = operation_tools(OPERATIONS)
