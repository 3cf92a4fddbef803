"""What the REST route and the MCP tool take and give: one set of models for both."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: tuple[Weekday, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _day_name(value: Any) -> Any:
    """A day name as students and models write it ("Sunday", "SUNDAY ") is the weekday; the rest
    is left to the Literal, whose refusal names the field and the days."""
    return value.strip().lower() if isinstance(value, str) else value


DayName = Annotated[Weekday, BeforeValidator(_day_name)]


def twelve_hour(hhmm: str) -> str:
    """``"16:30"`` -> ``"4:30 PM"``: every time a student reads has its 12-hour form beside it."""
    hour, minute = (int(part) for part in hhmm.split(":"))
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


class HallQuery(BaseModel):
    # An argument the tool does not take is refused by name, as the host's own tools do.
    model_config = ConfigDict(extra="forbid")

    open_on: DayName | None = Field(
        default=None,
        description="Only halls open at some time on this weekday, e.g. 'sunday' (any case). Omit for every hall.",
    )


class HallSlug(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = Field(
        min_length=1, max_length=80, description="The hall's slug as list_dining_halls gives it, e.g. 'stanton-hall'."
    )


class OpeningHours(BaseModel):
    day: Weekday
    opens: str = Field(description="HH:MM, campus time.")
    closes: str = Field(description="Earlier than `opens`: after midnight.")
    opens_12h: str = Field(description="`opens` on a 12-hour clock, such as 7:00 AM.")
    closes_12h: str


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
