"""Reading the dining feed (a JSON file) into the tables; the refresh job and the demo share it.

Each hall is checked on its own, so one malformed hall is reported as lost and the others are
still stored: the run is ``partial`` rather than failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import time
from typing import Any

from campus_mcp import utcnow
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from campus_dining.models import DiningHall, DiningHours
from campus_dining.schemas import WEEKDAYS, Weekday


class FeedOpening(BaseModel):
    day: Weekday
    opens: time
    closes: time


class FeedHall(BaseModel):
    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,79}$")
    name: str = Field(min_length=1, max_length=200)
    building: str | None = None
    description: str | None = None
    hours: list[FeedOpening] = Field(default_factory=list)


def parse_feed(raw: Mapping[str, Any]) -> tuple[list[FeedHall], dict[str, str]]:
    """The valid halls, and the lost ones keyed by slug (or position) with the reason."""
    halls: list[FeedHall] = []
    lost: dict[str, str] = {}
    entries = raw.get("halls")
    if not isinstance(entries, list):
        raise ValueError("the dining feed has no 'halls' list")
    for position, entry in enumerate(entries):
        try:
            halls.append(FeedHall.model_validate(entry))
        except ValidationError as exc:
            key = entry.get("slug") if isinstance(entry, dict) and isinstance(entry.get("slug"), str) else None
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            lost[key or f"halls[{position}]"] = f"{where}: {first['msg']}"
    return halls, lost


async def store_halls(session: AsyncSession, halls: Sequence[FeedHall], keep: Sequence[str] = ()) -> int:
    """Replace the stored halls with ``halls``; halls named in ``keep`` (lost this run) stay as they were."""
    now = utcnow()
    existing = {
        hall.slug: hall
        for hall in (await session.execute(select(DiningHall).options(selectinload(DiningHall.hours)))).scalars()
    }
    for item in halls:
        hall = existing.pop(item.slug, None)
        if hall is None:
            hall = DiningHall(slug=item.slug)
            session.add(hall)
        hall.name = item.name
        hall.building = item.building
        hall.description = item.description
        hall.updated_at = now
        hall.hours = [DiningHours(weekday=WEEKDAYS.index(o.day), opens=o.opens, closes=o.closes) for o in item.hours]
    gone = [hall.id for slug, hall in existing.items() if slug not in keep]
    if gone:
        await session.execute(delete(DiningHall).where(DiningHall.id.in_(gone)))
    return len(halls)
