"""dining: halls and weekly opening hours

Revision ID: dining_0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "dining_0001"
down_revision: str | Sequence[str] | None = None
# Each plugin is its own Alembic branch, labelled with the plugin name; it builds on the host's tables.
branch_labels: str | Sequence[str] | None = ("dining",)
depends_on: str | Sequence[str] | None = "core_0001"


def upgrade() -> None:
    op.create_table(
        "dining_halls",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("slug", sa.String(80), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("building", sa.String(200), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("slug", name="uq_dining_halls_slug"),
    )
    op.create_table(
        "dining_hours",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "hall_id",
            sa.Integer(),
            sa.ForeignKey("dining_halls.id", ondelete="CASCADE", name="fk_dining_hours_hall_id_dining_halls"),
            nullable=False,
        ),
        sa.Column("weekday", sa.Integer(), nullable=False),
        sa.Column("opens", sa.Time(), nullable=False),
        sa.Column("closes", sa.Time(), nullable=False),
    )
    op.create_index("ix_dining_hours_hall_id", "dining_hours", ["hall_id"])


def downgrade() -> None:
    op.drop_index("ix_dining_hours_hall_id", "dining_hours")
    op.drop_table("dining_hours")
    op.drop_table("dining_halls")
