"""core: a session generation per student, so that sign-out ends every copy of a session

Revision ID: core_0003
Revises: core_0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "core_0003"
down_revision: str | Sequence[str] | None = "core_0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing students start at 0; sessions signed before this revision carry no generation
    # and are refused, so everyone signs in once more after the upgrade.
    op.add_column("students", sa.Column("session_generation", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite 3.35+), not a batch copy of the table: dropping the old
    # students table would cascade to every code, token and consent row that refers to it.
    op.drop_column("students", "session_generation")
