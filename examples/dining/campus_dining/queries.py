"""The dining queries. The REST routes and the MCP tools both call these, and nothing else does."""

from __future__ import annotations

from campus_mcp import NotFound
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from campus_dining.models import DiningHall, DiningHours
from campus_dining.schemas import (
    WEEKDAYS,
    DiningHallInfo,
    DiningHallList,
    HallQuery,
    HallSlug,
    OpeningHours,
    twelve_hour,
)


def hall_info(hall: DiningHall) -> DiningHallInfo:
    return DiningHallInfo(
        slug=hall.slug,
        name=hall.name,
        building=hall.building,
        description=hall.description,
        hours=[
            OpeningHours(
                day=WEEKDAYS[h.weekday],
                opens=h.opens.strftime("%H:%M"),
                closes=h.closes.strftime("%H:%M"),
                opens_12h=twelve_hour(h.opens.strftime("%H:%M")),
                closes_12h=twelve_hour(h.closes.strftime("%H:%M")),
            )
            for h in hall.hours
        ],
        updated_at=hall.updated_at,
    )


async def list_halls(session: AsyncSession, query: HallQuery) -> DiningHallList:
    statement = select(DiningHall).options(selectinload(DiningHall.hours)).order_by(DiningHall.name)
    if query.open_on is not None:
        statement = statement.where(DiningHall.hours.any(DiningHours.weekday == WEEKDAYS.index(query.open_on)))
    halls = [hall_info(hall) for hall in (await session.execute(statement)).scalars()]
    return DiningHallList(halls=halls, count=len(halls))


async def get_hall(session: AsyncSession, query: HallSlug) -> DiningHallInfo:
    statement = select(DiningHall).options(selectinload(DiningHall.hours)).where(DiningHall.slug == query.slug)
    hall = (await session.execute(statement)).scalar_one_or_none()
    if hall is None:
        raise NotFound(
            f"There is no dining hall {query.slug!r}. list_dining_halls (GET /api/v1/dining/halls) "
            "gives every hall with its slug.",
            field="slug",
        )
    return hall_info(hall)
