"""core: the access log of student data (which app read or changed which student's data, when)

Revision ID: core_0008
Revises: core_0007
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.base.db import UTCDateTime

revision: str = "core_0008"
down_revision: str | Sequence[str] | None = "core_0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "student_access",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        # A student's deletion deletes their log with them (docs/privacy.md, deletion requests).
        sa.Column("student_id", sa.Integer(), sa.ForeignKey("students.id", ondelete="CASCADE"), nullable=False),
        sa.Column("app_kind", sa.String(10), nullable=False),
        sa.Column("app_id", sa.String(2000), nullable=False),
        sa.Column("app_name", sa.String(300), nullable=False),
        sa.Column("door", sa.String(300), nullable=False),
        sa.Column("action", sa.String(200), nullable=False),
        sa.Column("outcome", sa.String(30), nullable=False),
    )
    op.create_index("ix_student_access_at", "student_access", ["at"])
    op.create_index("ix_student_access_app_id", "student_access", ["app_id"])
    op.create_index("ix_student_access_student_at", "student_access", ["student_id", "at"])


def downgrade() -> None:
    op.drop_index("ix_student_access_student_at", "student_access")
    op.drop_index("ix_student_access_app_id", "student_access")
    op.drop_index("ix_student_access_at", "student_access")
    op.drop_table("student_access")
