"""core: how far each process's journal of the access log is in the database (issue 35, point 16)

Revision ID: core_0009
Revises: core_0008
Create Date: 2026-12-08
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.db import UTCDateTime

revision: str = "core_0009"
down_revision: str | Sequence[str] | None = "core_0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # One row a process's journal file (campus_mcp.access_journal): no student's data, a name and an offset.
    op.create_table(
        "student_access_journals",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("drained", sa.BigInteger(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("student_access_journals")
