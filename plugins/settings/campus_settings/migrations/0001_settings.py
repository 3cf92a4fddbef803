"""settings: class settings, level settings and notifications

Revision ID: settings_0001
Revises:
Create Date: 2026-12-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "settings_0001"
down_revision: str | Sequence[str] | None = None
# Its own branch. It points at the host's students and the catalog's meeting times.
branch_labels: str | Sequence[str] | None = ("settings",)
depends_on: str | Sequence[str] | None = ("core_0002", "catalog_0001")


def _setting_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("title_template", sa.String(1000), nullable=True),
        sa.Column("description_template", sa.String(4000), nullable=True),
        sa.Column("location_template", sa.String(1000), nullable=True),
        sa.Column("color", sa.String(20), nullable=True),
        sa.Column("visibility", sa.String(20), nullable=True),
        sa.Column("reminders", sa.JSON(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    ]


def _student() -> sa.Column[int]:
    return sa.Column("student_id", sa.Integer(), sa.ForeignKey("students.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "settings_class_settings",
        sa.Column("id", sa.Integer(), primary_key=True),
        _student(),
        sa.Column(
            "meeting_time_id",
            sa.Integer(),
            sa.ForeignKey("catalog_meeting_times.id", ondelete="CASCADE"),
            nullable=False,
        ),
        *_setting_columns(),
        sa.UniqueConstraint("student_id", "meeting_time_id", name="uq_settings_class_settings_student_id"),
    )
    op.create_table(
        "settings_level_settings",
        sa.Column("id", sa.Integer(), primary_key=True),
        _student(),
        sa.Column("level", sa.String(80), nullable=False),
        *_setting_columns(),
        sa.UniqueConstraint("student_id", "level", name="uq_settings_level_settings_student_id"),
    )
    op.create_table(
        "settings_notifications",
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("paused_until", UTCDateTime(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("settings_notifications")
    op.drop_table("settings_level_settings")
    op.drop_table("settings_class_settings")
