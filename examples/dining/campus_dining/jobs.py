"""The refresh job: reads the dining feed into the tables every morning."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from campus_mcp import Cron, Job, JobContext, JobOutcome

from campus_dining.feed import parse_feed, store_halls

REFRESH_JOB_ID = "dining.refresh_hours"


def refresh_job(feed: Path) -> Job:
    async def refresh_hours(context: JobContext) -> JobOutcome:
        # A file read is quick, but it must not block the event loop the server also runs on.
        raw = json.loads(await asyncio.to_thread(feed.read_text, encoding="utf-8"))
        halls, lost = parse_feed(raw)
        async with context.session() as session, session.begin():
            stored = await store_halls(session, halls, keep=list(lost))
        return JobOutcome(items=stored, lost=lost, summary=f"{stored} hall(s) read from {feed.name}")

    return Job(
        id=REFRESH_JOB_ID,
        description="Read the dining halls' weekly hours from the dining feed.",
        # 05:10 campus time: before breakfast opens, after the dining office's nightly update.
        trigger=Cron(minute="10", hour="5"),
        run=refresh_hours,
    )
