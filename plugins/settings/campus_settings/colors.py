"""Event colors as a settings tool takes them (seed 000): one of Google Calendar's 11 event color
names, its color id 1-11, or a ``#rrggbb`` hex color. A name or an id is stored as the name, a
hex color in lower case, so one color has one spelling in the database and in every answer."""

from __future__ import annotations

import re

from campus_mcp import InvalidInput

# Google Calendar's event colors, in the order of their ids (1 = lavender ... 11 = tomato).
COLORS: dict[str, tuple[int, str]] = {
    "lavender": (1, "#7986cb"),
    "sage": (2, "#33b679"),
    "grape": (3, "#8e24aa"),
    "flamingo": (4, "#e67c73"),
    "banana": (5, "#f6bf26"),
    "tangerine": (6, "#f4511e"),
    "peacock": (7, "#039be5"),
    "graphite": (8, "#616161"),
    "blueberry": (9, "#3f51b5"),
    "basil": (10, "#0b8043"),
    "tomato": (11, "#d50000"),
}
BY_ID = {color_id: name for name, (color_id, _hex) in COLORS.items()}
HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
COLOR_RULE = (
    f"Give one of the color names ({', '.join(COLORS)}), a Google Calendar color id from 1 to 11, "
    "or a hex color such as '#1a73e8'."
)


def parse_color(value: str | int) -> str:
    """The stored spelling of a color the student gave, or an InvalidInput naming the rule."""
    text = str(value).strip().lower()
    if text in COLORS:
        return text
    if text.isdigit() and int(text) in BY_ID:
        return BY_ID[int(text)]
    if HEX.match(text):
        return text
    shown = text[:40] + ("\u2026" if len(text) > 40 else "")
    raise InvalidInput(f"{shown!r} is not a color. {COLOR_RULE}", field="color")


def google_color_id(color: str) -> int | None:
    """The color id of a named color (a hex color has none: the sync sends it as it is)."""
    return COLORS[color][0] if color in COLORS else None
