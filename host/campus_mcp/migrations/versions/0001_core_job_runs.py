"""core: job run records and deployment state

Revision ID: core_0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp.base.db import UTCDateTime

revision: str = "core_0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = ("core",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job_id", sa.String(200), nullable=False),
        sa.Column("plugin", sa.String(100), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("lost", sa.JSON(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
    )
    op.create_index("ix_job_runs_job_id", "job_runs", ["job_id"])
    op.create_table(
        "campus_state",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.String(1000), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("campus_state")
    op.drop_index("ix_job_runs_job_id", "job_runs")
    op.drop_table("job_runs")
