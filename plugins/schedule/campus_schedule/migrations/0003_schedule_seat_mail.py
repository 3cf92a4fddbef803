"""schedule: a seat watch's openings and the e-mail of each (issue 39)

Revision ID: schedule_0003
Revises: schedule_0002
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "schedule_0003"
down_revision: str | Sequence[str] | None = "schedule_0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Whether the section had a seat when the watch was last looked at, and how many openings it
    # has seen: the claim that makes one opening one e-mail (campus_schedule.seat_mail).
    op.add_column(
        "schedule_seat_watches", sa.Column("seat_open_seen", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("schedule_seat_watches", sa.Column("openings", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "schedule_seat_mail",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "watch_id",
            sa.Integer(),
            sa.ForeignKey("schedule_seat_watches.id", ondelete="CASCADE", name="fk_schedule_seat_mail_watch_id"),
            nullable=False,
        ),
        sa.Column("opening", sa.Integer(), nullable=False),
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_schedule_seat_mail_student_id_students"),
            nullable=False,
        ),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=False),
        sa.Column("claimed_at", UTCDateTime(), nullable=True),
        sa.Column("sent_at", UTCDateTime(), nullable=True),
        sa.Column("sent_to", sa.String(320), nullable=True),
        sa.Column("seats", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("watch_id", "opening", name="uq_schedule_seat_mail_watch_opening"),
    )
    op.create_index("ix_schedule_seat_mail_status", "schedule_seat_mail", ["status", "next_attempt_at"])
    op.create_index("ix_schedule_seat_mail_student_id", "schedule_seat_mail", ["student_id"])


def downgrade() -> None:
    op.drop_index("ix_schedule_seat_mail_student_id", "schedule_seat_mail")
    op.drop_index("ix_schedule_seat_mail_status", "schedule_seat_mail")
    op.drop_table("schedule_seat_mail")
    op.drop_column("schedule_seat_watches", "openings")
    op.drop_column("schedule_seat_watches", "seat_open_seen")
