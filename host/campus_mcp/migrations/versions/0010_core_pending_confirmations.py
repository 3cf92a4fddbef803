"""core: changes waiting for the student's Confirm on the confirmation page (issue 39, point 1)

Revision ID: core_0010
Revises: core_0009
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.base.db import UTCDateTime

revision: str = "core_0010"
down_revision: str | Sequence[str] | None = "core_0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # One row a change a client asked for and the student has not confirmed yet (campus_mcp.mcp.confirmation_page).
    op.create_table(
        "pending_confirmations",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("student_id", sa.Integer(), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("arguments", sa.Text(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("message_digest", sa.String(64), nullable=False),
        sa.Column("version", sa.String(200), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("decided_at", UTCDateTime(), nullable=True),
    )
    op.create_index("ix_pending_confirmations_student_id", "pending_confirmations", ["student_id"])
    op.create_index("ix_pending_confirmations_expires_at", "pending_confirmations", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_pending_confirmations_expires_at", "pending_confirmations")
    op.drop_index("ix_pending_confirmations_student_id", "pending_confirmations")
    op.drop_table("pending_confirmations")
