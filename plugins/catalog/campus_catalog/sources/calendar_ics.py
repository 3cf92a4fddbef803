"""The academic calendar from an iCalendar (RFC 5545) feed or file into ``university_events``.

The ``icalendar`` package does the format: folded lines, escaped commas and semicolons, time
zones, ``VALUE=DATE`` all-day events. What is ours: an all-day event's ``DTEND`` is exclusive
(an event on 22 April ends on 23 April), and the model keeps an inclusive ``end_date``; a timed
event with no zone is in the campus time zone; an event is matched on its ``UID`` so a re-import
updates it in place; an event the feed no longer has is removed (the registrar deleted it).

Categories come from ``CATEGORIES`` when the feed has them, else from the words of the title:
registrars' feeds (the Princeton fixture, 25Live exports) rarely set them.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
from campus_mcp import DocumentLimit, utcnow
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_catalog.catalog_settings import feed_limit
from campus_catalog.models import UniversityEvent
from campus_catalog.sources.banner_parse import MappingProblem
from campus_catalog.sources.errors import UnreadableResponse
from campus_catalog.sources.feed_fetch import fetch_feed

CALENDAR_FEED = "calendar feed"
CALENDAR_LIMIT = feed_limit(CALENDAR_FEED)

# First match wins; the order matters ("Last Day of Scheduled Classes" is a term date, not a deadline).
_CATEGORY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("finals", re.compile(r"\bfinal exam|\bfinals?\b|examination period", re.IGNORECASE)),
    ("holiday", re.compile(r"\brecess\b|\bholiday\b|\bbreak\b|no classes|university closed", re.IGNORECASE)),
    (
        "term",
        re.compile(
            r"classes (begin|end|resume)|(first|last) day of (regularly )?(scheduled )?classes|term (begins|ends)|"
            r"reading period|commencement|wintersession",
            re.IGNORECASE,
        ),
    ),
    ("registration", re.compile(r"registration|course selection|add/drop|sign-in", re.IGNORECASE)),
    ("deadline", re.compile(r"deadline|last day|\bdue\b", re.IGNORECASE)),
)


@dataclass(frozen=True)
class CalendarEvent:
    uid: str
    title: str
    start_date: date
    end_date: date  # inclusive
    all_day: bool
    starts_at: datetime | None
    ends_at: datetime | None
    category: str
    description: str | None
    location: str | None


@dataclass
class CalendarReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    problems: list[MappingProblem] = field(default_factory=list)

    @property
    def stored(self) -> int:
        return self.created + self.updated + self.unchanged

    def lost(self) -> dict[str, str]:
        return {f"event {p.item}": p.reason for p in self.problems}

    def summary(self) -> str:
        return (
            f"{self.stored} calendar events: {self.created} new, {self.updated} changed, {self.unchanged} unchanged, "
            f"{self.removed} removed; {len(self.problems)} could not be read"
        )


def categorise(title: str, categories: list[str]) -> str:
    if categories:
        return categories[0].strip().lower()[:50] or "event"
    for name, words in _CATEGORY_WORDS:
        if words.search(title):
            return name
    return "event"


def _text(component: Any, name: str) -> str | None:
    value = component.get(name)
    if value is None:
        return None
    cleaned = " ".join(str(value).split())
    return cleaned or None


def _categories(component: Any) -> list[str]:
    value = component.get("CATEGORIES")
    values = value if isinstance(value, list) else [value] if value is not None else []
    found: list[str] = []
    for item in values:
        found.extend(str(cat) for cat in getattr(item, "cats", [item]))
    return [c for c in found if c.strip()]


def _event(component: Any, zone: ZoneInfo) -> CalendarEvent:
    """One VEVENT. Raises ValueError when it has no start or no title."""
    title = _text(component, "SUMMARY")
    start_prop = component.get("DTSTART")
    if start_prop is None:
        raise ValueError("no DTSTART")
    if not title:
        raise ValueError("no SUMMARY")
    start = start_prop.dt
    end_prop = component.get("DTEND")
    duration = component.get("DURATION")
    if end_prop is not None:
        end = end_prop.dt
    elif duration is not None:
        end = start + duration.dt
    else:
        end = start + timedelta(days=1) if not isinstance(start, datetime) else start
    uid = _text(component, "UID") or "generated:" + hashlib.sha256(f"{title}|{start}".encode()).hexdigest()[:24]
    description = _text(component, "DESCRIPTION")
    if description is None and (url := _text(component, "URL")):
        description = f"Details: {url}"
    common: dict[str, Any] = {
        "uid": uid,
        "title": title,
        "category": categorise(title, _categories(component)),
        "description": description,
        "location": _text(component, "LOCATION"),
    }
    if isinstance(start, datetime):
        # A floating time (no zone) is the campus's local time.
        starts_at = (start if start.tzinfo else start.replace(tzinfo=zone)).astimezone(UTC)
        end_dt = end if isinstance(end, datetime) else datetime.combine(end, start.time())
        ends_at = (end_dt if end_dt.tzinfo else end_dt.replace(tzinfo=zone)).astimezone(UTC)
        return CalendarEvent(
            start_date=starts_at.astimezone(zone).date(),
            end_date=max(ends_at.astimezone(zone).date(), starts_at.astimezone(zone).date()),
            all_day=False,
            starts_at=starts_at,
            ends_at=ends_at,
            **common,
        )
    end_date = end.date() if isinstance(end, datetime) else end
    # DTEND of an all-day event is the day after the last day (RFC 5545 3.6.1).
    return CalendarEvent(
        start_date=start,
        end_date=max(start, end_date - timedelta(days=1)),
        all_day=True,
        starts_at=None,
        ends_at=None,
        **common,
    )


def parse_calendar(data: bytes, timezone: str) -> tuple[list[CalendarEvent], list[MappingProblem]]:
    """Every VEVENT of a feed; an event that cannot be read is named by UID (or title) with the reason."""
    try:
        calendar = icalendar.Calendar.from_ical(data)
    except ValueError as exc:
        raise UnreadableResponse(f"not an iCalendar file: {exc}", kind="parse") from exc
    zone = ZoneInfo(timezone)
    events: list[CalendarEvent] = []
    problems: list[MappingProblem] = []
    for component in calendar.walk("VEVENT"):
        try:
            event = _event(component, zone)
        except (ValueError, TypeError, AttributeError) as exc:
            problems.append(MappingProblem(_text(component, "UID") or _text(component, "SUMMARY") or "?", str(exc)))
            continue
        if component.get("RRULE") is not None:
            problems.append(MappingProblem(event.uid, "repeating event (RRULE): stored once, at its first date"))
        events.append(event)
    return events, problems


async def fetch_calendar(url: str, timeout_seconds: float, limit: DocumentLimit = CALENDAR_LIMIT) -> bytes:
    return await fetch_feed(url, timeout_seconds, limit=limit, accept="text/calendar")


_FIELDS = ("title", "start_date", "end_date", "all_day", "starts_at", "ends_at", "category", "description", "location")


async def import_calendar_events(
    session: AsyncSession, events: list[CalendarEvent], *, now: datetime, report: CalendarReport, complete: bool
) -> None:
    """Upsert on UID; when the feed was read whole, remove the events it no longer has."""
    existing = {e.source_uid: e for e in await session.scalars(select(UniversityEvent)) if e.source_uid}
    seen: set[str] = set()
    for event in events:
        if event.uid in seen:
            report.problems.append(MappingProblem(event.uid, "UID appears twice in the feed; the first one is kept"))
            continue
        seen.add(event.uid)
        values = {name: getattr(event, name) for name in _FIELDS}
        row = existing.get(event.uid)
        if row is None:
            session.add(UniversityEvent(source_uid=event.uid, last_fetched_at=now, **values))
            report.created += 1
            continue
        changed = False
        for name, value in values.items():
            if getattr(row, name) != value:
                setattr(row, name, value)
                changed = True
        row.last_fetched_at = now
        report.updated += changed
        report.unchanged += not changed
    if complete:
        gone = [uid for uid in existing if uid not in seen]
        if gone:
            await session.execute(delete(UniversityEvent).where(UniversityEvent.source_uid.in_(gone)))
        report.removed = len(gone)


async def import_calendar(
    sessions: async_sessionmaker[AsyncSession],
    timezone: str,
    *,
    url: str = "",
    path: Path | None = None,
    timeout_seconds: float = 30.0,
    limit: DocumentLimit = CALENDAR_LIMIT,
) -> CalendarReport:
    """Read the feed (``url``, up to ``limit``) or a saved file (``path``) and store its events."""
    if path is not None:
        data = await asyncio.to_thread(path.read_bytes)
    elif url:
        data = await fetch_calendar(url, timeout_seconds, limit)
    else:
        raise ValueError("give the calendar feed URL or a saved .ics file")
    events, problems = parse_calendar(data, timezone)
    report = CalendarReport(problems=problems)
    async with sessions() as session:
        await import_calendar_events(session, events, now=utcnow(), report=report, complete=True)
        await session.commit()
    return report
