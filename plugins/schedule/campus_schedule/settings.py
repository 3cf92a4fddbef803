"""The schedule family's own settings: where campus IT's enrollment feed is."""

from __future__ import annotations

from campus_mcp import PluginSettings
from pydantic import Field

# A row is about 30 bytes: a campus of 40,000 students with 6 sections each is about 7 MB.
ENROLLMENT_FEED_MAX_BYTES = 64 * 1024 * 1024


class ScheduleSettings(PluginSettings):
    enrollment_feed: str | None = Field(
        default=None,
        description="The enrollment feed (CSV of student, term, CRN, and optionally the student's name): an "
        "https URL or a file path; "
        "when set, a job reads it every day at 5:30 AM campus time.",
    )
    enrollment_feed_max_bytes: int = Field(
        default=ENROLLMENT_FEED_MAX_BYTES,
        ge=64 * 1024,
        description="The most read of the enrollment feed from its URL; a larger one is refused and the run "
        "records why.",
    )
    enrollment_complete_terms: list[str] = Field(
        default_factory=list,
        description="Terms the feed lists completely: a feed section missing from the feed is taken away. "
        "A row '*,<term>,COMPLETE' in the file says the same.",
    )
