"""friends: each student's friend code, what a friend types to send them a request

Revision ID: friends_0002
Revises: friends_0001
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "friends_0002"
down_revision: str | Sequence[str] | None = "friends_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A new table only: the previous release's processes never read it (expand, then contract).
    op.create_table(
        "friend_codes",
        sa.Column(
            "student_id",
            sa.Integer(),
            sa.ForeignKey("students.id", ondelete="CASCADE", name="fk_friend_codes_student_id_students"),
            primary_key=True,
        ),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("code", name="uq_friend_codes_code"),
    )


def downgrade() -> None:
    op.drop_table("friend_codes")
