"""catalog: an index of sections by id that holds what an instructor search tests and sorts

Revision ID: catalog_0008
Revises: catalog_0007
Create Date: 2026-12-02

An instructor search for a surname ("garcia" at ``--scale 67``: 290 instructors, 1,746 sections
in every term, 495 of them in the current term) finds the sections of those instructors by id,
then keeps the term's that are not cancelled and sorts them in the catalog order. By id, each of
the 1,746 was a read of its row (1.5 KB with its vector; SQLite ~13 ms under load), and
PostgreSQL chose instead to hash every section of the term (36,030) from the listing index
(~40 ms under load). ``(id, term_id, cancelled, course_id, section_number, crn,
seats_available)`` answers the test, the join to the course and the order from the index alone
(open sections only too), on both engines (PostgreSQL ~20 ms, then reading it by id).

On SQLite a campus already analyzed (``sqlite_stat1`` exists: the demo load ends with ANALYZE)
gets the new index's statistics too, so its planner does not weigh it by guesses.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "catalog_0008"
down_revision: str | Sequence[str] | None = "catalog_0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ix_catalog_sections_by_id"
COLUMNS = ["id", "term_id", "cancelled", "course_id", "section_number", "crn", "seats_available"]


def upgrade() -> None:
    op.create_index(NAME, "catalog_sections", COLUMNS)
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        analyzed = bind.execute(sa.text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")).first()
        if analyzed is not None:
            op.execute(f"ANALYZE {NAME}")


def downgrade() -> None:
    op.drop_index(NAME, "catalog_sections")
