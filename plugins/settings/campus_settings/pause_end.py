"""The end of a pause of the reminders, as ``set_notifications`` takes it (issue 39, point 3).

"Pause my reminders until Monday" should not leave the arithmetic to the model: ``until`` takes
the student's end as words a model copies (a date and time, a date, a weekday), read on the
campus's clock, and the question and the answer say the end back as a date and time in campus
time. A date, or a weekday, means its midnight: the reminders are back for that whole day. A
weekday is the next one after today (today's name means a week on).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from campus_mcp import InvalidInput

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Longer than any term: a pause past it is a typo of the year, not a plan.
LONGEST_PAUSE = timedelta(days=366)


def _refused(why: str, zone: str) -> InvalidInput:
    return InvalidInput(
        f"{why} Give until as a date and time on the campus's clock ({zone}), for example "
        "'2026-12-14T09:00', a date ('2026-12-14', its midnight) or a weekday ('monday'), or give minutes.",
        field="until",
    )


def _local_day(text: str, today: date) -> date | None:
    name = text.lower()
    if name in WEEKDAYS:
        ahead = (WEEKDAYS.index(name) - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead)
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def pause_end(text: str, zone: str, now: datetime) -> datetime:
    """The end ``text`` names, an aware instant (whole minutes) after ``now``; refused with an
    example otherwise."""
    text = text.strip()
    campus = ZoneInfo(zone)
    day = _local_day(text, now.astimezone(campus).date())
    if day is not None:
        end = datetime.combine(day, time(0, 0), tzinfo=campus)
    else:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise _refused(f"until {text!r} is not a date, a time or a weekday.", zone) from None
        # A time without an offset is the campus's clock, as the student said it.
        end = moment.replace(tzinfo=campus) if moment.tzinfo is None else moment
    end = end.replace(second=0, microsecond=0)
    if end <= now:
        raise _refused(f"until {text!r} is already past.", zone)
    if end - now > LONGEST_PAUSE:
        raise _refused(f"until {text!r} is more than a year away.", zone)
    return end
