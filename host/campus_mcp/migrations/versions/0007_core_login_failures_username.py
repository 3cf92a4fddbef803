"""core: failed sign-ins name the username they tried (a per-account limit beside the per-address one)

Revision ID: core_0007
Revises: core_0006
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "core_0007"
down_revision: str | Sequence[str] | None = "core_0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Failures recorded before this counted by address only; they keep counting there.
    op.add_column("login_failures", sa.Column("username", sa.String(150), nullable=False, server_default=""))
    op.create_index("ix_login_failures_username", "login_failures", ["username"])


def downgrade() -> None:
    op.drop_index("ix_login_failures_username", "login_failures")
    op.drop_column("login_failures", "username")  # a plain DROP COLUMN (SQLite 3.35+), as core_0003
