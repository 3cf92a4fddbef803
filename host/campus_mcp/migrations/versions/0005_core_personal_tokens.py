"""core: personal access tokens (a student's own token for scripts and campus-mcp stdio)

Revision ID: core_0005
Revises: core_0004
Create Date: 2026-12-15
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.base.db import UTCDateTime

revision: str = "core_0005"
down_revision: str | Sequence[str] | None = "core_0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "personal_tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        # The token's public handle (one indexed lookup); the secret is kept as a keyed hash only.
        sa.Column("public_id", sa.String(24), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("students.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("last_used_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("public_id", name="uq_personal_tokens_public_id"),
    )
    op.create_index("ix_personal_tokens_user_id", "personal_tokens", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_personal_tokens_user_id", "personal_tokens")
    op.drop_table("personal_tokens")
