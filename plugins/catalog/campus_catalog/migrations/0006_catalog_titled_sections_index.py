"""catalog: an index of the sections that have a title of their own

Revision ID: catalog_0006
Revises: catalog_0005
Create Date: 2026-12-01

A search by title words finds the sections of the courses whose title or description has the
words, and the sections whose own title (a topics course's) has them. Almost no section has a
title of its own (none of the 36,030 in the current term of ``--scale 67``), yet the title test
read every section of the term: ~10 ms on SQLite and PostgreSQL. This partial index holds only
the titled ones, by term, so that test reads those alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "catalog_0006"
down_revision: str | Sequence[str] | None = "catalog_0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TITLED = sa.text("title IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_catalog_sections_titled",
        "catalog_sections",
        ["term_id", "title"],
        sqlite_where=_TITLED,
        postgresql_where=_TITLED,
    )


def downgrade() -> None:
    op.drop_index("ix_catalog_sections_titled", "catalog_sections")
