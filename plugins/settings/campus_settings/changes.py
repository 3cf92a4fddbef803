"""What a change asks for, checked once and used both for the confirmation question and for the
save (seed 000: the message comes from the same parsing as the save, so the student sees what
the tool saves; a change that cannot be saved is a tool error before any question).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from campus_mcp import InvalidInput

from campus_settings.colors import parse_color
from campus_settings.models import FIELDS
from campus_settings.schemas import SettingFields
from campus_settings.templates import TEMPLATE_FIELDS, check_template


@dataclasses.dataclass(frozen=True)
class SettingChange:
    """The new stored value of each field the call names (None: not set) and the fields it resets."""

    values: dict[str, Any]
    reset: frozenset[str]

    def apply(self, old: dict[str, Any]) -> dict[str, Any]:
        new = dict(old)
        for field in self.reset:
            new[field] = None
        new.update(self.values)
        return new


def parse_change(args: SettingFields) -> SettingChange:
    given = args.model_fields_set
    values: dict[str, Any] = {}
    for field in FIELDS:
        if field not in given:
            continue
        raw = getattr(args, field)
        if raw is None:
            continue
        if field in TEMPLATE_FIELDS:
            # An empty template is "not set": the level below applies (seed 000).
            values[field] = check_template(field, raw) or None  # type: ignore[arg-type]
        elif field == "color":
            values[field] = parse_color(raw)
        elif field == "reminders":
            values[field] = sorted({reminder.total_minutes for reminder in raw})
        else:
            values[field] = raw
    both = sorted(set(values) & set(args.reset))
    if both:
        raise InvalidInput(
            f"{', '.join(both)} is both given and in reset. Give a new value, or reset it to use the level below, not both.",
            field="reset",
        )
    if not values and not args.reset and not (given - {"reset", "meeting_time_id", "level"}):
        raise InvalidInput(
            "Give at least one setting to change (title_template, description_template, location_template, "
            "color, visibility, reminders) or the fields to reset.",
        )
    return SettingChange(values=values, reset=frozenset(args.reset))
