"""The dining REST API. Thin: each route is one call to the query its MCP tool calls too."""

from __future__ import annotations

from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from sqlalchemy.ext.asyncio import AsyncSession

from campus_dining import queries
from campus_dining.schemas import DiningHallInfo, DiningHallList, HallQuery, HallSlug, Weekday


class DiningController(Controller):
    path = "/api/v1/dining"

    @get("/halls")
    async def list_halls(
        self, db_session: NamedDependency[AsyncSession], open_on: FromQuery[Weekday | None] = None
    ) -> DiningHallList:
        """Every dining hall with its weekly hours; ``?open_on=sunday`` keeps the halls open that day."""
        return await queries.list_halls(db_session, HallQuery(open_on=open_on))

    @get("/halls/{slug:str}")
    async def get_hall(self, db_session: NamedDependency[AsyncSession], slug: FromPath[str]) -> DiningHallInfo:
        """One dining hall by its slug (404 with the way to find slugs when there is none)."""
        return await queries.get_hall(db_session, HallSlug(slug=slug))
