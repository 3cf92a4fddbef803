"""catalog: an index on the CRN of a section

Revision ID: catalog_0004
Revises: catalog_0003
Create Date: 2026-12-01

``get_section`` without a term looks a CRN up in every term (the newest that has it). The only
index holding the CRN was the unique (term_id, crn), where the CRN comes second, so SQLite read
the whole index for each lookup (``plugins/catalog/tests/test_query_plans.py`` caught it).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "catalog_0004"
down_revision: str | Sequence[str] | None = "catalog_0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_catalog_sections_crn", "catalog_sections", ["crn"])


def downgrade() -> None:
    op.drop_index("ix_catalog_sections_crn", "catalog_sections")
