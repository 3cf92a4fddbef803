"""A moment as a student reads it: the campus's clock, 12-hour, with the weekday (issue 24, point 2).

The database and upstream services keep UTC; every time an answer or a page shows is campus time
(``CAMPUS_MCP_TIMEZONE``), once as ISO 8601 with the campus's offset of that day and once as words:
``Friday, September 12, 11:59 PM``. One helper, so every family writes the same words.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo


def campus_time_text(moment: datetime, timezone: str) -> str:
    """``Friday, September 12, 11:59 PM``: ``moment`` (aware) on the campus's clock, in ``timezone``."""
    local = moment.astimezone(ZoneInfo(timezone))
    hour = (local.hour % 12) or 12
    return f"{local:%A, %B} {local.day}, {hour}:{local:%M} {'AM' if local.hour < 12 else 'PM'}"
