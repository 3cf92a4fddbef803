"""The dining REST API. Thin: each route is one call to the query its MCP tool calls too.

Each route takes its parameters as plain strings and builds the pydantic model the tool takes,
so both check them by the same rules; a value that breaks one is answered by the host as a 400
naming the field and the rule (no try/except here)."""

from __future__ import annotations

from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from sqlalchemy.ext.asyncio import AsyncSession

from campus_dining import queries
from campus_dining.schemas import DiningHallInfo, DiningHallList, HallQuery, HallSlug


class DiningController(Controller):
    path = "/api/v1/dining"

    @get("/halls")
    async def list_halls(
        self, db_session: NamedDependency[AsyncSession], open_on: FromQuery[str | None] = None
    ) -> DiningHallList:
        """Every dining hall with its weekly hours; ``?open_on=sunday`` keeps the halls open that day."""
        return await queries.list_halls(db_session, HallQuery(open_on=open_on))

    @get("/halls/{slug:str}")
    async def get_hall(self, db_session: NamedDependency[AsyncSession], slug: FromPath[str]) -> DiningHallInfo:
        """One dining hall by its slug (404 with the way to find slugs when there is none)."""
        return await queries.get_hall(db_session, HallSlug(slug=slug))
