"""Days and times of day as students write them, and today's date on the campus."""

from __future__ import annotations

import re
from datetime import date, datetime
from zoneinfo import ZoneInfo

from campus_mcp import campus_time_text

from campus_catalog.models import DAY_LETTERS

_DAY_WORDS = {
    "monday": "M",
    "mon": "M",
    "tuesday": "T",
    "tue": "T",
    "tues": "T",
    "wednesday": "W",
    "wed": "W",
    "thursday": "R",
    "thu": "R",
    "thur": "R",
    "thurs": "R",
    "friday": "F",
    "fri": "F",
    "saturday": "S",
    "sat": "S",
    "sunday": "U",
    "sun": "U",
}
_TIME = re.compile(r"^\s*(\d{1,2})(?::?(\d{2}))?\s*([ap])?\.?\s*m?\.?\s*$", re.IGNORECASE)


def parse_days(value: str) -> str:
    """``"TR"``, ``"tue,thu"``, ``"Monday Wednesday"`` -> Banner letters in week order (``"TR"``)."""
    text = value.strip()
    letters: set[str] = set()
    words = [w for w in re.split(r"[\s,;/]+", text.lower()) if w]
    if words and all(w in _DAY_WORDS for w in words):
        letters = {_DAY_WORDS[w] for w in words}
    elif re.fullmatch(r"[MTWRFSUmtwrfsu]+", text):
        letters = set(text.upper())
    else:
        raise ValueError(
            f"{value!r} is not a set of days. Use Banner day letters (M T W R F S U, R is Thursday), "
            "for example 'MWF' or 'TR', or day names such as 'Tuesday, Thursday'."
        )
    return "".join(letter for letter in DAY_LETTERS if letter in letters)


def parse_time_of_day(value: str) -> int:
    """``"10:00"``, ``"1000"``, ``"1:30 PM"``, ``"9am"`` -> minutes after midnight."""
    match = _TIME.match(value)
    if match:
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        meridiem = (match.group(3) or "").lower()
        if meridiem == "p" and hour < 12:
            hour += 12
        elif meridiem == "a" and hour == 12:
            hour = 0
        if 0 <= hour <= 23 and 0 <= minute <= 59:
            return hour * 60 + minute
    raise ValueError(f"{value!r} is not a time of day. Use HH:MM on a 24-hour clock, such as '13:30', or '1:30 PM'.")


def hhmm(minutes: int | None) -> str | None:
    return None if minutes is None else f"{minutes // 60:02d}:{minutes % 60:02d}"


def twelve_hour(minutes: int | None) -> str | None:
    """810 -> ``"1:30 PM"``: the clock students read (seed 000: pages and answers show 12-hour times)."""
    if minutes is None:
        return None
    hour, minute = divmod(minutes, 60)
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def days_string(weekdays: set[int] | list[int]) -> str:
    return "".join(DAY_LETTERS[d] for d in sorted(set(weekdays)))


def weekdays_of(days: str) -> list[int]:
    return [DAY_LETTERS.index(letter) for letter in days]


def campus_today(timezone: str) -> date:
    """Today on the campus, which is not today in UTC for the last hours of an Eastern evening."""
    return datetime.now(ZoneInfo(timezone)).date()


def campus_moment(moment: datetime | None, timezone: str) -> tuple[datetime | None, str | None]:
    """A stored (UTC) moment on the campus's clock, and its text with the weekday and a 12-hour time
    (``Monday, November 2, 1:30 AM``): what an answer shows beside it (issue 37, point 8)."""
    if moment is None:
        return None, None
    return moment.astimezone(ZoneInfo(timezone)), campus_time_text(moment, timezone)
