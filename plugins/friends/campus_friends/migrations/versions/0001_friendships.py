"""friends: friendships and friend requests

Revision ID: friends_0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "friends_0001"
down_revision: str | Sequence[str] | None = None
# Its own branch, labelled with the plugin name; it needs only the host's students table.
branch_labels: str | Sequence[str] | None = ("friends",)
depends_on: str | Sequence[str] | None = "core_0001"


def upgrade() -> None:
    op.create_table(
        "friendships",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "low_student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_friendships_low_student_id_students"),
            nullable=False,
        ),
        sa.Column(
            "high_student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_friendships_high_student_id_students"),
            nullable=False,
        ),
        sa.Column("requester_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("accepted_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("low_student_id", "high_student_id", name="uq_friendships_pair"),
        sa.CheckConstraint("low_student_id < high_student_id", name=op.f("ck_friendships_pair_order")),
        sa.CheckConstraint("status IN ('pending', 'accepted')", name=op.f("ck_friendships_status")),
    )
    op.create_index("ix_friendships_low_student_id", "friendships", ["low_student_id"])
    op.create_index("ix_friendships_high_student_id", "friendships", ["high_student_id"])


def downgrade() -> None:
    op.drop_index("ix_friendships_high_student_id", "friendships")
    op.drop_index("ix_friendships_low_student_id", "friendships")
    op.drop_table("friendships")
