"""settings: the calendar feed's secret (its SHA-256 only)

Revision ID: settings_0002
Revises: settings_0001
Create Date: 2026-12-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "settings_0002"
down_revision: str | Sequence[str] | None = "settings_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "settings_calendar_feeds",
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("token_sha256", name="uq_settings_calendar_feeds_token_sha256"),
    )


def downgrade() -> None:
    op.drop_table("settings_calendar_feeds")
