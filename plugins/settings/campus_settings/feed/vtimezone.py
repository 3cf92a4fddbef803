"""The campus zone as a ``VTIMEZONE`` every calendar parser reads (issue 24, point 1).

``icalendar``'s ``add_missing_timezones`` lists a zone's transitions as one comma-separated
``RDATE`` and opens with a made-up observance at its first date (``EDT`` to ``EDT``); Mozilla's
ical.js reads only the first value of an ``RDATE`` line, so it kept America/New_York at -04:00
after 2026-11-01. Here the transitions come from ``zoneinfo`` itself, grouped by what they change
to, and each group is written as the zone's rule: a yearly ``RRULE`` ("first Sunday of November
at 02:00") when every transition in the span follows one, else one ``RDATE`` a line. A zone with
no transition in the span is one ``STANDARD`` observance at its fixed offset.
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from icalendar import Timezone, TimezoneDaylight, TimezoneStandard

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# One observance: the offset before, the offset after, the abbreviation, daylight or not.
Kind = tuple[timedelta, timedelta, str, bool]


def _offset(zone: ZoneInfo, instant: datetime) -> timedelta:
    return instant.astimezone(zone).utcoffset() or timedelta(0)


def transitions(zone: ZoneInfo, first: date, last: date) -> list[datetime]:
    """The UTC instants between the dates at which the zone's offset changes, to the minute."""
    found: list[datetime] = []
    day = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    end = datetime.combine(last, datetime.min.time(), tzinfo=UTC)
    while day < end:
        after = day + timedelta(days=1)
        if _offset(zone, day) != _offset(zone, after):
            low, high = day, after  # the change is in (low, high]: halve to the minute
            while high - low > timedelta(minutes=1):
                middle = low + (high - low) / 2
                middle = middle.replace(second=0, microsecond=0)
                if middle <= low:
                    break
                if _offset(zone, middle) == _offset(zone, low):
                    low = middle
                else:
                    high = middle
            found.append(high)
        day = after
    return found


def _kind(zone: ZoneInfo, instant: datetime) -> Kind:
    before = _offset(zone, instant - timedelta(minutes=1))
    local = instant.astimezone(zone)
    return before, local.utcoffset() or timedelta(0), local.tzname() or zone.key, bool(local.dst())


def _yearly_rule(onsets: list[datetime]) -> dict[str, object] | None:
    """The RRULE that gives exactly these local onsets, one a year, if one does."""
    if len({(o.month, o.weekday(), o.time()) for o in onsets}) != 1:
        return None
    if [o.year for o in onsets] != list(range(onsets[0].year, onsets[0].year + len(onsets))):
        return None
    ordinals: set[int] | None = None
    for onset in onsets:
        mine = {(onset.day - 1) // 7 + 1}
        if onset.day + 7 > calendar.monthrange(onset.year, onset.month)[1]:
            mine.add(-1)  # also the last such weekday of its month
        ordinals = mine if ordinals is None else ordinals & mine
    if not ordinals:
        return None
    ordinal = max(ordinals)  # "2nd Sunday" over "last Sunday" when both fit
    return {"freq": "yearly", "bymonth": onsets[0].month, "byday": f"{ordinal}{WEEKDAYS[onsets[0].weekday()]}"}


def vtimezone(zone: ZoneInfo, first: date, last: date) -> Timezone:
    """The ``VTIMEZONE`` of ``zone`` for events between the dates (give a year's margin or more)."""
    component = Timezone()
    component.add("tzid", zone.key)
    groups: dict[Kind, list[datetime]] = defaultdict(list)
    for instant in transitions(zone, first, last):
        kind = _kind(zone, instant)
        # DTSTART and RDATE of an observance are local times in its TZOFFSETFROM (RFC 5545 3.6.5).
        groups[kind].append((instant + kind[0]).replace(tzinfo=None))
    if not groups:
        fixed = datetime.combine(first, datetime.min.time(), tzinfo=UTC).astimezone(zone)
        offset = fixed.utcoffset() or timedelta(0)
        groups[(offset, offset, fixed.tzname() or zone.key, False)] = [datetime(1970, 1, 1)]
    for (before, after, name, daylight), onsets in sorted(groups.items(), key=lambda item: item[1][0]):
        observance = TimezoneDaylight() if daylight else TimezoneStandard()
        observance.add("dtstart", onsets[0])
        rule = _yearly_rule(onsets) if len(onsets) > 1 else None
        if rule is not None:
            observance.add("rrule", rule)
        else:
            for onset in onsets[1:]:
                observance.add("rdate", onset)  # one a line: ical.js reads a line's first value only
        observance.add("tzname", name)
        observance.add("tzoffsetfrom", before)
        observance.add("tzoffsetto", after)
        component.add_component(observance)
    return component
