"""The confirmation questions of the settings tools (seed 000 "Confirmation").

A question lists the events the change affects, each field that changes with its old and its new
value, then what keeps its own settings. Templates come last, one per line, quoted with newlines
and quotes shown as escapes and cut after 120 characters (``campus_mcp.confirmation_template``),
so a template cannot change the layout of the question. Reminder times are numbers as a student
reads them ("1 hour", "1.5 hours", "10 minutes").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from campus_mcp import campus_time_text, confirmation_template, plural

from campus_settings.models import FIELDS
from campus_settings.templates import TEMPLATE_FIELDS

NAMES = {
    "title_template": "title template",
    "description_template": "description template",
    "location_template": "location template",
    "color": "color",
    "visibility": "visibility",
    "reminders": "reminders",
}
SOURCE_WORDS = {"individual": "this class", "global": "all classes", "system_default": "default"}


def reminder_text(minutes: int) -> str:
    if minutes >= 60 and minutes % 30 == 0:
        return plural(minutes / 60, "hour")
    return plural(minutes, "minute")


def reminders_text(reminders: Sequence[int]) -> str:
    if not reminders:
        return "no reminders"
    return ", ".join(f"{reminder_text(m)} before" for m in reminders)


def value_text(field: str, value: Any) -> str:
    if value is None or (field in TEMPLATE_FIELDS and not value):
        return "not set"
    if field in TEMPLATE_FIELDS:
        return confirmation_template(str(value))
    if field == "reminders":
        return reminders_text(value)
    return str(value)


def source_text(source: str) -> str:
    if source.startswith("event_type:"):
        return f"all {source.split(':', 1)[1]} classes"
    if source.startswith("university_events:"):
        return f"{source.split(':', 1)[1]} events"
    return SOURCE_WORDS.get(source, source.replace("_", " "))


def field_lines(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    old_sources: Mapping[str, str] | None = None,
    new_sources: Mapping[str, str] | None = None,
) -> list[str]:
    """One line per field that changes, the templates last; with sources, each value says its level."""
    lines: list[str] = []
    ordered = [f for f in FIELDS if f not in TEMPLATE_FIELDS] + list(TEMPLATE_FIELDS)
    for field in ordered:
        before, after = old.get(field), new.get(field)
        changed = before != after or (
            old_sources is not None and new_sources is not None and old_sources[field] != new_sources[field]
        )
        if not changed:
            continue
        shown_before, shown_after = value_text(field, before), value_text(field, after)
        if old_sources is not None and new_sources is not None:
            shown_before += f" ({source_text(old_sources[field])})"
            shown_after += f" ({source_text(new_sources[field])})"
        lines.append(f"- {NAMES[field]}: {shown_before} -> {shown_after}")
    return lines


def question(head: str, lines: Sequence[str], keeps: Sequence[str]) -> str:
    # The lines with templates must stay last: the keeps go between the head and the changes.
    return "\n".join([head, *keeps, *lines])


def on_campus(moment: datetime, zone: str) -> datetime:
    """The instant with the campus's UTC offset of that day: every time a student reads is campus
    time (issue 24, point 2), the database keeps UTC."""
    return moment.astimezone(ZoneInfo(zone))


def campus_time(moment: datetime, zone: str) -> str:
    """``Tuesday, December 1, 9:23 AM (America/New_York time)``: the end of a pause on the
    student's clock, the campus's, not the database's UTC."""
    return f"{campus_time_text(moment, zone)} ({zone} time)"
