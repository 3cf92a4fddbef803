"""canvas: a student's Canvas connection

Revision ID: canvas_0001
Revises:
Create Date: 2027-01-15
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "canvas_0001"
down_revision: str | Sequence[str] | None = None
# Its own branch, labelled with the plugin name; it needs only the host's students table.
branch_labels: str | Sequence[str] | None = ("canvas",)
depends_on: str | Sequence[str] | None = "core_0001"


def upgrade() -> None:
    op.create_table(
        "canvas_connections",
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_canvas_connections_student_id_students"),
            primary_key=True,
        ),
        sa.Column("canvas_user_id", sa.String(64), nullable=False),
        sa.Column("canvas_user_name", sa.String(200), nullable=False, server_default=""),
        sa.Column("access_token", sa.Text(), nullable=True),
        sa.Column("refresh_token", sa.Text(), nullable=True),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("scopes", sa.Text(), nullable=False, server_default=""),
        sa.Column("connected_at", UTCDateTime(), nullable=False),
        sa.Column("refreshed_at", UTCDateTime(), nullable=True),
        sa.Column("lost_at", UTCDateTime(), nullable=True),
        sa.Column("demo", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("feed_due_work", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_table("canvas_connections")
