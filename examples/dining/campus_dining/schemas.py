"""What the REST route and the MCP tool take and give: one set of models for both."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: tuple[Weekday, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


class HallQuery(BaseModel):
    open_on: Weekday | None = Field(
        default=None, description="Only halls open at some time on this weekday, e.g. 'sunday'. Omit for every hall."
    )


class HallSlug(BaseModel):
    slug: str = Field(
        min_length=1, max_length=80, description="The hall's slug as list_dining_halls gives it, e.g. 'stanton-hall'."
    )


class OpeningHours(BaseModel):
    day: Weekday
    opens: str = Field(description="HH:MM, campus time.")
    closes: str = Field(description="Earlier than `opens`: after midnight.")


class DiningHallInfo(BaseModel):
    slug: str
    name: str
    building: str | None
    description: str | None
    hours: list[OpeningHours] = Field(description="Empty: no hours this week.")
    updated_at: datetime = Field(description="When the dining feed was last read.")


class DiningHallList(BaseModel):
    halls: list[DiningHallInfo]
    count: int
