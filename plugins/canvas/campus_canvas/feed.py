"""The student's Canvas due dates in their calendar feed (``register_calendar_events``), when they
chose it on the Canvas page (off until then).

One planner read (``GET /api/v1/planner/items``) for the next weeks, the same cached read the
``canvas_due_work`` tool makes, so a calendar app polling the feed costs Canvas little. Each piece of
work with a due time is one event at that moment, taking no time (a deadline, not a block of the
day), titled ``Due: <title> (<course>)``, linked to its Canvas page. A student who is not connected,
or whose connection stopped working, gets no events; the feed is served without them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

from campus_mcp import CalendarEvent, CalendarSource, CampusError, Settings
from sqlalchemy.ext.asyncio import AsyncSession

from campus_canvas import service
from campus_canvas.models import CanvasConnection
from campus_canvas.reader import canvas_reader
from campus_canvas.schemas import MAX_WINDOW_DAYS, DueWorkQuery, WorkItem
from campus_canvas.settings import CanvasSettings

# The planner's window for the feed: a week back (work just missed) to the longest window a call reads.
BACK = timedelta(days=7)


def canvas_due_dates(settings: Settings, plugin_settings: CanvasSettings) -> CalendarSource:
    async def events(session: AsyncSession, student_id: int, start: datetime, end: datetime) -> Sequence[CalendarEvent]:
        row = await session.get(CanvasConnection, student_id)
        if row is None or not row.feed_due_work or row.lost_at is not None:
            return []

        @asynccontextmanager
        async def borrowed() -> AsyncIterator[AsyncSession]:
            yield session  # the feed's session for this source: the reader's writes (a refresh) commit in it

        today = service.campus_today(settings)
        first = max(today - BACK, start.date())
        last = min(first + timedelta(days=MAX_WINDOW_DAYS), end.date())
        if last < first:
            return []
        query = DueWorkQuery(start_date=first, end_date=last, limit=100)
        try:
            async with canvas_reader(borrowed, settings, plugin_settings, student_id) as reader:
                due = await service.due_work(reader, query, settings)
        except CampusError:
            return []  # not connected any more, or Canvas unavailable: no events this time
        return [_event(item) for item in due.items if item.due_at is not None]

    return CalendarSource(key="due-dates", title="Canvas due dates", events=events)


def _event(item: WorkItem) -> CalendarEvent:
    assert item.due_at is not None
    course = item.course.code or item.course.name if item.course else ""
    title = item.title.untrusted_text + (f" ({course})" if course else "")
    points = f", {item.points_possible:g} points" if item.points_possible is not None else ""
    return CalendarEvent(
        uid=f"{item.kind}-{_key(item)}",
        title=f"Due: {title}",
        starts_at=datetime.fromisoformat(item.due_at),
        # No time of reading in it: the feed's ETag is its body's digest, and a calendar app should
        # download it again only when something it shows changed.
        description=f"From Canvas: {item.kind.replace('_', ' ')}{points}; {item.state.replace('_', ' ')}.",
        url=item.url or "",
    )


def _key(item: WorkItem) -> str:
    # The Canvas page's path ends with the item's id; an item without one keys by its due time.
    return (item.url or "").rstrip("/").rsplit("/", 1)[-1] or (item.due_at or "")
