"""The academic calendar: holidays, deadlines, finals week, term dates."""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

from campus_mcp import Settings, campus_time_text
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.models import UniversityEvent
from campus_catalog.queries.clock import campus_today
from campus_catalog.queries.serialize import page_fields
from campus_catalog.schemas import EventOut, EventPage, EventsQuery

DEFAULT_WINDOW_DAYS = 180


async def university_events(
    session: AsyncSession, query: EventsQuery, settings: Settings, catalog: CatalogSettings
) -> EventPage:
    start = query.start_date or campus_today(settings.timezone)
    zone = ZoneInfo(settings.timezone)
    end = query.end_date or start + timedelta(days=DEFAULT_WINDOW_DAYS)
    # An event is in the window when any of its days is (finals week started before the window counts).
    where = [UniversityEvent.start_date <= end, UniversityEvent.end_date >= start]
    if query.category:
        where.append(func.lower(UniversityEvent.category) == query.category.strip().lower())
    if query.q:
        for word in query.q.lower().split():
            where.append(func.lower(UniversityEvent.title).contains(word, autoescape=True))
    total = await session.scalar(select(func.count()).select_from(UniversityEvent).where(*where)) or 0
    events = (
        await session.scalars(
            select(UniversityEvent)
            .where(*where)
            .order_by(UniversityEvent.start_date, UniversityEvent.title, UniversityEvent.id)
            .offset(query.offset)
            .limit(query.limit)
        )
    ).all()
    return EventPage(
        start_date=start,
        end_date=end,
        **page_fields(query, total),
        events=[
            EventOut(
                title=e.title,
                start_date=e.start_date,
                start_weekday=f"{e.start_date:%A}",
                end_date=e.end_date,
                end_weekday=f"{e.end_date:%A}",
                all_day=e.all_day,
                starts_at=e.starts_at.astimezone(zone) if e.starts_at else None,
                ends_at=e.ends_at.astimezone(zone) if e.ends_at else None,
                starts_at_text=campus_time_text(e.starts_at, settings.timezone) if e.starts_at else None,
                category=e.category,
                description=e.description,
                location=e.location,
            )
            for e in events
        ],
        note=None if total else await _covered(session, start, end),
    )


async def _covered(session: AsyncSession, start: date, end: date) -> str:
    """Why a window has no event, in dates: which days the loaded calendar covers (issue 37,
    point 1), so "no holiday in May" is not said of a calendar that ends in December."""
    first, last = (
        await session.execute(select(func.min(UniversityEvent.start_date), func.max(UniversityEvent.end_date)))
    ).one()
    if first is None:
        return (
            "No academic calendar is loaded on this campus: the dates are not known here, which does not mean "
            "there are none. See the registrar's academic calendar."
        )
    return f"No event matches between {start} and {end}. The calendar loaded here covers {first} to {last}" + (
        "; outside those dates events are not known here, not absent: see the registrar's academic calendar."
        if start < first or end > last
        else "."
    )
