"""schedule: seat watches (watch_section)

Revision ID: schedule_0002
Revises: schedule_0001
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "schedule_0002"
down_revision: str | Sequence[str] | None = "schedule_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "schedule_seat_watches",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_schedule_seat_watches_student_id_students"),
            nullable=False,
        ),
        sa.Column("term_uid", sa.String(20), nullable=False),
        sa.Column(
            "section_id",
            sa.Integer(),
            sa.ForeignKey(
                "catalog_sections.id", ondelete="CASCADE", name="fk_schedule_seat_watches_section_id_catalog_sections"
            ),
            nullable=False,
        ),
        sa.Column("crn", sa.String(20), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("student_id", "section_id", name="uq_schedule_seat_watches_student_id"),
    )
    op.create_index("ix_schedule_seat_watches_student_term", "schedule_seat_watches", ["student_id", "term_uid"])
    op.create_index("ix_schedule_seat_watches_section_id", "schedule_seat_watches", ["section_id"])


def downgrade() -> None:
    op.drop_index("ix_schedule_seat_watches_section_id", "schedule_seat_watches")
    op.drop_index("ix_schedule_seat_watches_student_term", "schedule_seat_watches")
    op.drop_table("schedule_seat_watches")
