"""schedule: enrollments and the students' own events

Revision ID: schedule_0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "schedule_0001"
down_revision: str | Sequence[str] | None = None
# Its own branch, labelled with the plugin name. It points at the host's students (core_0002)
# and the catalog's sections (catalog_0001), so it needs both.
branch_labels: str | Sequence[str] | None = ("schedule",)
depends_on: str | Sequence[str] | None = ("core_0002", "catalog_0001")


def upgrade() -> None:
    op.create_table(
        "schedule_enrollments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_schedule_enrollments_student_id_students"),
            nullable=False,
        ),
        sa.Column("term_uid", sa.String(20), nullable=False),
        sa.Column(
            "section_id",
            sa.Integer(),
            sa.ForeignKey(
                "catalog_sections.id", ondelete="CASCADE", name="fk_schedule_enrollments_section_id_catalog_sections"
            ),
            nullable=False,
        ),
        sa.Column("crn", sa.String(20), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("student_id", "section_id", name="uq_schedule_enrollments_student_id"),
    )
    op.create_index("ix_schedule_enrollments_student_term", "schedule_enrollments", ["student_id", "term_uid"])
    op.create_index("ix_schedule_enrollments_section_id", "schedule_enrollments", ["section_id"])
    op.create_table(
        "schedule_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "owner_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_schedule_events_owner_id_students"),
            nullable=False,
        ),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("starts_at", UTCDateTime(), nullable=False),
        sa.Column("ends_at", UTCDateTime(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_schedule_events_owner_start", "schedule_events", ["owner_id", "starts_at"])
    op.create_table(
        "schedule_event_attendees",
        sa.Column(
            "event_id",
            sa.Integer(),
            sa.ForeignKey(
                "schedule_events.id",
                ondelete="CASCADE",
                name="fk_schedule_event_attendees_event_id_schedule_events",
            ),
            nullable=False,
        ),
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_schedule_event_attendees_student_id_students"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("event_id", "student_id", name="pk_schedule_event_attendees"),
    )
    op.create_index("ix_schedule_event_attendees_student_id", "schedule_event_attendees", ["student_id"])


def downgrade() -> None:
    op.drop_index("ix_schedule_event_attendees_student_id", "schedule_event_attendees")
    op.drop_table("schedule_event_attendees")
    op.drop_index("ix_schedule_events_owner_start", "schedule_events")
    op.drop_table("schedule_events")
    op.drop_index("ix_schedule_enrollments_section_id", "schedule_enrollments")
    op.drop_index("ix_schedule_enrollments_student_term", "schedule_enrollments")
    op.drop_table("schedule_enrollments")
