"""catalog: each section's meeting days and hours on its row, kept by the database

Revision ID: catalog_0005
Revises: catalog_0004
Create Date: 2026-12-01

A days-and-times search asked, for every section of the term, two questions of its meetings
(one on a wanted day? none on another day, before begins_after or after ends_before?): two index
probes per section. On the 100,000-section demo campus (``--scale 67``, 36,030 sections in the
current term) that was 168 ms on SQLite and about 190 ms on PostgreSQL for one page, whatever
the page size, since the count needs every section.

A section's meetings answer all of those from three numbers: the days it meets (a bit per
weekday, 1 << weekday), its earliest start and its latest end. They live on the section row
and in the term listing index (rebuilt here with them and the section id), so the search reads
the index alone.
Triggers on ``catalog_meeting_times`` keep them right for every writer (the Banner import, the
refresh queue, the demo loader, tests and examples that add meetings), with no code to forget.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "catalog_0005"
down_revision: str | Sequence[str] | None = "catalog_0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The section's three numbers from its meetings; ``{id}`` is the section id expression. The sum
# of distinct powers of two is their bitwise or, on both engines.
_SUMMARY = (
    "meeting_days = (SELECT coalesce(sum(DISTINCT 1 << weekday), 0) FROM catalog_meeting_times "
    "WHERE section_id = {id} AND weekday IS NOT NULL), "
    "first_start_minute = (SELECT min(start_minute) FROM catalog_meeting_times WHERE section_id = {id}), "
    "last_end_minute = (SELECT max(end_minute) FROM catalog_meeting_times WHERE section_id = {id})"
)

_LISTING = ["term_id", "cancelled", "course_id", "section_number", "crn", "seats_available", "title"]
_SUMMARY_COLUMNS = ["meeting_days", "first_start_minute", "last_end_minute"]


def _summarize(section_id: str) -> str:
    return f"UPDATE catalog_sections SET {_SUMMARY.format(id=section_id)} WHERE id = {section_id}"  # noqa: S608


def upgrade() -> None:
    with op.batch_alter_table("catalog_sections") as batch:
        batch.add_column(sa.Column("meeting_days", sa.SmallInteger(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("first_start_minute", sa.SmallInteger(), nullable=True))
        batch.add_column(sa.Column("last_end_minute", sa.SmallInteger(), nullable=True))
    op.execute(_summarize("catalog_sections.id"))
    op.drop_index("ix_catalog_sections_term_listing", "catalog_sections")
    # The id last: PostgreSQL's index holds no row id of its own (SQLite's does), and without it
    # every match was a heap visit of a row with its 1.5 KB vector, never an index-only scan.
    op.create_index("ix_catalog_sections_term_listing", "catalog_sections", [*_LISTING, *_SUMMARY_COLUMNS, "id"])
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        op.execute(
            "CREATE TRIGGER catalog_meeting_times_summary_ai AFTER INSERT ON catalog_meeting_times "
            f"BEGIN {_summarize('new.section_id')}; END"
        )
        op.execute(
            "CREATE TRIGGER catalog_meeting_times_summary_ad AFTER DELETE ON catalog_meeting_times "
            f"BEGIN {_summarize('old.section_id')}; END"
        )
        op.execute(
            "CREATE TRIGGER catalog_meeting_times_summary_au AFTER UPDATE OF section_id, weekday, start_minute, "
            f"end_minute ON catalog_meeting_times BEGIN {_summarize('old.section_id')}; "
            f"{_summarize('new.section_id')}; END"
        )
    elif dialect == "postgresql":
        op.execute(
            "CREATE FUNCTION catalog_meeting_times_summary() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF TG_OP <> 'INSERT' THEN {_summarize('OLD.section_id')}; END IF; "
            f"IF TG_OP <> 'DELETE' THEN {_summarize('NEW.section_id')}; END IF; "
            "RETURN NULL; END $$"
        )
        op.execute(
            "CREATE TRIGGER catalog_meeting_times_summary AFTER INSERT OR DELETE OR UPDATE OF section_id, weekday, "
            "start_minute, end_minute ON catalog_meeting_times FOR EACH ROW EXECUTE FUNCTION "
            "catalog_meeting_times_summary()"
        )


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for suffix in ("ai", "ad", "au"):
            op.execute(f"DROP TRIGGER IF EXISTS catalog_meeting_times_summary_{suffix}")
    elif dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS catalog_meeting_times_summary ON catalog_meeting_times")
        op.execute("DROP FUNCTION IF EXISTS catalog_meeting_times_summary()")
    op.drop_index("ix_catalog_sections_term_listing", "catalog_sections")
    op.create_index("ix_catalog_sections_term_listing", "catalog_sections", _LISTING)
    with op.batch_alter_table("catalog_sections") as batch:
        for column in reversed(_SUMMARY_COLUMNS):
            batch.drop_column(column)
