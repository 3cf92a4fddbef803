"""catalog: keys of the stale-section refresh queue

Revision ID: catalog_0002
Revises: catalog_0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "catalog_0002"
down_revision: str | Sequence[str] | None = "catalog_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "catalog_section_refresh_keys",
        sa.Column("term_uid", sa.String(20), nullable=False),
        sa.Column("crn", sa.String(20), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("term_uid", "crn", name=op.f("pk_catalog_section_refresh_keys")),
    )
    op.create_index("ix_catalog_section_refresh_keys_expires_at", "catalog_section_refresh_keys", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_catalog_section_refresh_keys_expires_at", "catalog_section_refresh_keys")
    op.drop_table("catalog_section_refresh_keys")
