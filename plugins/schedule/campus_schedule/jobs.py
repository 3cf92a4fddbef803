"""The enrollment feed job and the run records of ``campus-mcp import enrollments``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from campus_mcp import Cron, DocumentLimit, Job, JobContext, JobOutcome

from campus_schedule.feed import FeedResult, import_enrollments
from campus_schedule.settings import ENROLLMENT_FEED_MAX_BYTES, ScheduleSettings

FEED_JOB_ID = "schedule.enrollment_feed"
IMPORT_JOB_ID = "schedule.import.enrollments"


def outcome_of(result: FeedResult) -> JobOutcome:
    return JobOutcome(items=result.added + result.unchanged, lost=result.lost(), summary=result.summary)


async def read_feed(location: str, max_bytes: int = ENROLLMENT_FEED_MAX_BYTES) -> str:
    if location.startswith(("https://", "http://")):
        from campus_catalog.sources.feed_fetch import fetch_feed

        limit = DocumentLimit("enrollment feed", max_bytes, "CAMPUS_MCP_SCHEDULE_ENROLLMENT_FEED_MAX_BYTES")
        raw = await fetch_feed(location, 60.0, limit=limit, accept="text/csv")
        return raw.decode("utf-8-sig")
    return await asyncio.to_thread(Path(location).read_text, encoding="utf-8-sig")


def feed_job(
    plugin_settings: ScheduleSettings, *, create_students: bool = False, campus_id_pattern: str | None = None
) -> Job:
    location = plugin_settings.enrollment_feed or ""

    async def read_enrollments(context: JobContext) -> JobOutcome:
        content = await read_feed(location, plugin_settings.enrollment_feed_max_bytes)
        async with context.session() as session:
            result = await import_enrollments(
                session,
                content,
                complete_terms=plugin_settings.enrollment_complete_terms,
                create_students=create_students,
                campus_id_pattern=campus_id_pattern,
            )
        return outcome_of(result)

    return Job(
        id=FEED_JOB_ID,
        description="Read campus IT's enrollment feed into the students' schedules.",
        # 05:30 campus time: after the catalog's 4 AM sync, so the feed's CRNs are known.
        trigger=Cron(minute="30", hour="5"),
        run=read_enrollments,
    )
