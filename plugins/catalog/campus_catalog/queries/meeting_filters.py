"""The day and time filters of a section search, as tests of the section's own row.

A section row carries what its meetings say (migration catalog_0005, kept by triggers):
``meeting_days``, one bit ``1 << weekday`` per day it meets; ``first_start_minute``, its
earliest start; ``last_end_minute``, its latest end. Each filter is then a test of three numbers
in the term listing index instead of two probes of the meetings per section (a days-and-times
page of the 36,030-section term of ``--scale 67``, see the migration).

The meaning is the one the meeting probes had (seed 000): ``days`` means meets on at least one of
those days and on no other (a meeting with no day, online or TBA, counts for neither);
``free_days``, no meeting on those days; ``begins_after``, no meeting starts earlier;
``ends_before``, no meeting ends later. A meeting without times meets neither time filter's test.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, or_

from campus_catalog.models import Section
from campus_catalog.queries.clock import parse_time_of_day, weekdays_of
from campus_catalog.schemas import SectionSearch

ALL_DAYS = 0b1111111


def day_bits(days: str) -> int:
    """The ``meeting_days`` bits of day letters such as ``"TR"``."""
    bits = 0
    for weekday in weekdays_of(days):
        bits |= 1 << weekday
    return bits


def meeting_conditions(query: SectionSearch) -> list[ColumnElement[bool]]:
    """The SQL conditions of ``days``, ``free_days``, ``begins_after`` and ``ends_before``."""
    where: list[ColumnElement[bool]] = []
    days = Section.meeting_days
    if query.days:
        wanted = day_bits(query.days)
        where += [days.op("&")(wanted) != 0, days.op("&")(ALL_DAYS & ~wanted) == 0]
    if query.free_days:
        where.append(days.op("&")(day_bits(query.free_days)) == 0)
    if query.begins_after:
        start = Section.first_start_minute
        where.append(or_(start.is_(None), start >= parse_time_of_day(query.begins_after)))
    if query.ends_before:
        end = Section.last_end_minute
        where.append(or_(end.is_(None), end <= parse_time_of_day(query.ends_before)))
    return where
