"""core: the campus student id on each student, and a switch that disables a student

Revision ID: core_0006
Revises: core_0005
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "core_0006"
down_revision: str | Sequence[str] | None = "core_0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The registrar's id of the student (the identity provider's mapped claim, the enrollment
    # feed's first column). Existing students have none until they sign in with the provider.
    op.add_column("students", sa.Column("campus_id", sa.String(150), nullable=True))
    op.create_index("ix_students_campus_id", "students", ["campus_id"], unique=True)
    op.add_column("students", sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # Plain DROP COLUMN (SQLite 3.35+), not a batch copy: dropping the old students table would
    # cascade to every code, token and consent row that refers to it.
    op.drop_index("ix_students_campus_id", table_name="students")
    op.drop_column("students", "disabled")
    op.drop_column("students", "campus_id")
