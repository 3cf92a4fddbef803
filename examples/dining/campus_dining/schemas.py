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
    opens: str = Field(description="Opening time, HH:MM, in the campus time zone.")
    closes: str = Field(description="Closing time, HH:MM; earlier than `opens` means after midnight.")


class DiningHallInfo(BaseModel):
    slug: str
    name: str
    building: str | None = Field(description="The building it is in, or null when the feed does not say.")
    description: str | None
    hours: list[OpeningHours] = Field(description="Weekly openings; empty when the hall has no hours this week.")
    updated_at: datetime = Field(description="When these hours were last read from the dining feed.")


class DiningHallList(BaseModel):
    halls: list[DiningHallInfo]
    count: int
