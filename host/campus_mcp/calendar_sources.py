"""Events plugins add to the student's calendar feed (``register_calendar_events``).

The feed (the settings family's ``/calendar/<secret>.ics``) is read by calendar apps every hour or so
and must answer: a source that reads another service (the student's LMS) may be slow or down. Each
source gets ``SOURCE_SECONDS`` and a session of its own; one that fails or runs out of time is left
out of this read of the feed and logged with its plugin, and the feed is served with everything
else. Each event's uid is made unique across plugins (``<plugin>-<key>-<uid>``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from datetime import datetime

from campus_mcp.contributions import CalendarEvent
from campus_mcp.deployment import Deployment

log = logging.getLogger(__name__)
SOURCE_SECONDS = 10.0


async def calendar_events_for(
    deployment: Deployment, student_id: int, start: datetime, end: datetime
) -> list[CalendarEvent]:
    """Every enabled source's events of ``student_id`` between ``start`` and ``end``, in plugin order."""
    found: list[CalendarEvent] = []
    for source in deployment.registry.calendar_sources:
        try:
            async with asyncio.timeout(SOURCE_SECONDS), deployment.session() as session:
                events = list(await source.events(session, student_id, start, end))
        except Exception:  # a slow or broken source: the feed goes on without it
            log.warning(
                "calendar source %r of plugin %r gave no events for the feed", source.key, source.plugin, exc_info=True
            )
            continue
        found += [dataclasses.replace(event, uid=f"{source.plugin}-{source.key}-{event.uid}") for event in events]
    return found
