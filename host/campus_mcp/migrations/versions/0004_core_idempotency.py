"""core: idempotency keys of write tools, and the confirmation states already answered

Revision ID: core_0004
Revises: core_0003
Create Date: 2026-12-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.base.db import UTCDateTime

revision: str = "core_0004"
down_revision: str | Sequence[str] | None = "core_0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("tool", sa.String(100), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("arguments_digest", sa.String(64), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("owner", "tool", "key", name="uq_idempotency_keys_owner"),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])
    op.create_table(
        "answered_request_states",
        sa.Column("nonce", sa.String(64), primary_key=True),
        sa.Column("answered_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_answered_request_states_answered_at", "answered_request_states", ["answered_at"])


def downgrade() -> None:
    op.drop_index("ix_answered_request_states_answered_at", "answered_request_states")
    op.drop_table("answered_request_states")
    op.drop_index("ix_idempotency_keys_created_at", "idempotency_keys")
    op.drop_table("idempotency_keys")
