"""catalog: the public course catalog and its full-text indexes

Revision ID: catalog_0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from campus_mcp import UTCDateTime

revision: str = "catalog_0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = ("catalog",)
depends_on: str | Sequence[str] | None = "core_0001"

# Must stay equal to PG_COURSE_DOCUMENT / PG_REVIEW_DOCUMENT in campus_catalog.models: a
# migration is frozen history, so it carries its own copy rather than importing the model.
_PG_COURSE_DOCUMENT = "coalesce(title, '') || ' ' || coalesce(description, '')"
_PG_REVIEW_DOCUMENT = "coalesce(text, '')"

# FTS5 with Porter stemming, so "programs" finds "Programming". External content: the words
# index points at the rows of the real table instead of holding a second copy of the text.
_SQLITE_FTS = {
    "catalog_courses_fts": ("catalog_courses", ("title", "description")),
    "catalog_reviews_fts": ("catalog_reviews", ("text",)),
}


def _timestamp(name: str) -> sa.Column[object]:
    return sa.Column(name, UTCDateTime(), nullable=True)


def upgrade() -> None:
    op.create_table(
        "catalog_terms",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("uid", sa.String(20), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("start_date", sa.Date(), nullable=False),
        sa.Column("end_date", sa.Date(), nullable=False),
        sa.Column("registration_opens_on", sa.Date(), nullable=True),
        sa.Column("registration_closes_on", sa.Date(), nullable=True),
        _timestamp("sections_synced_at"),
        _timestamp("catalog_imported_at"),
        _timestamp("details_synced_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_terms")),
        sa.UniqueConstraint("uid", name=op.f("uq_catalog_terms_uid")),
    )
    op.create_table(
        "catalog_parts_of_term",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(20), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("start_date", sa.Date(), nullable=True),
        sa.Column("end_date", sa.Date(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_parts_of_term")),
        sa.ForeignKeyConstraint(
            ["term_id"],
            ["catalog_terms.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_parts_of_term_term_id_catalog_terms"),
        ),
        sa.UniqueConstraint("term_id", "code", name=op.f("uq_catalog_parts_of_term_term_id")),
    )
    op.create_table(
        "catalog_campuses",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("code", sa.String(20), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_campuses")),
        sa.UniqueConstraint("code", name=op.f("uq_catalog_campuses_code")),
    )
    op.create_table(
        "catalog_subjects",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("code", sa.String(20), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("school", sa.String(200), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_subjects")),
        sa.UniqueConstraint("code", name=op.f("uq_catalog_subjects_code")),
    )
    op.create_table(
        "catalog_courses",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("subject_code", sa.String(20), nullable=False),
        sa.Column("course_number", sa.String(20), nullable=False),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("credits_min", sa.Float(), nullable=True),
        sa.Column("credits_max", sa.Float(), nullable=True),
        sa.Column("prerequisites", sa.JSON(), nullable=True),
        sa.Column("corequisites", sa.JSON(), nullable=True),
        sa.Column("restrictions", sa.JSON(), nullable=True),
        sa.Column("mutual_exclusions", sa.JSON(), nullable=True),
        sa.Column("catalog_entry", sa.Text(), nullable=True),
        sa.Column("fees", sa.JSON(), nullable=True),
        sa.Column("learning_objectives", sa.JSON(), nullable=True),
        sa.Column("terms_offered", sa.JSON(), nullable=True),
        _timestamp("details_synced_at"),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_courses")),
        sa.ForeignKeyConstraint(
            ["subject_code"],
            ["catalog_subjects.code"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_courses_subject_code_catalog_subjects"),
        ),
        sa.UniqueConstraint("subject_code", "course_number", name=op.f("uq_catalog_courses_subject_code")),
    )
    op.create_table(
        "catalog_sections",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("crn", sa.String(20), nullable=False),
        sa.Column("section_number", sa.String(20), nullable=False),
        sa.Column("title", sa.String(300), nullable=True),
        sa.Column("schedule_type", sa.String(100), nullable=True),
        sa.Column("instructional_method", sa.String(100), nullable=True),
        sa.Column("campus_id", sa.Integer(), nullable=True),
        sa.Column("part_of_term_id", sa.Integer(), nullable=True),
        sa.Column("credits_min", sa.Float(), nullable=True),
        sa.Column("credits_max", sa.Float(), nullable=True),
        sa.Column("capacity", sa.Integer(), nullable=True),
        sa.Column("enrolled", sa.Integer(), nullable=True),
        sa.Column("seats_available", sa.Integer(), nullable=True),
        sa.Column("waitlist_capacity", sa.Integer(), nullable=True),
        sa.Column("waitlist_available", sa.Integer(), nullable=True),
        sa.Column("cancelled", sa.Boolean(), nullable=False),
        sa.Column("cross_list_group", sa.String(20), nullable=True),
        sa.Column("cross_listed_crns", sa.JSON(), nullable=False),
        sa.Column("link_identifier", sa.String(20), nullable=True),
        sa.Column("linked_crns", sa.JSON(), nullable=False),
        _timestamp("banner_synced_at"),
        _timestamp("seats_synced_at"),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_sections")),
        sa.ForeignKeyConstraint(
            ["term_id"],
            ["catalog_terms.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_sections_term_id_catalog_terms"),
        ),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["catalog_courses.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_sections_course_id_catalog_courses"),
        ),
        sa.ForeignKeyConstraint(
            ["campus_id"], ["catalog_campuses.id"], name=op.f("fk_catalog_sections_campus_id_catalog_campuses")
        ),
        sa.ForeignKeyConstraint(
            ["part_of_term_id"],
            ["catalog_parts_of_term.id"],
            name=op.f("fk_catalog_sections_part_of_term_id_catalog_parts_of_term"),
        ),
        sa.UniqueConstraint("term_id", "crn", name=op.f("uq_catalog_sections_term_id")),
    )
    op.create_index("ix_catalog_sections_course_id", "catalog_sections", ["course_id"])
    op.create_index("ix_catalog_sections_term_id_course_id", "catalog_sections", ["term_id", "course_id"])
    op.create_table(
        "catalog_section_attributes",
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(20), nullable=False),
        sa.Column("description", sa.String(200), nullable=True),
        sa.PrimaryKeyConstraint("section_id", "code", name=op.f("pk_catalog_section_attributes")),
        sa.ForeignKeyConstraint(
            ["section_id"],
            ["catalog_sections.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_section_attributes_section_id_catalog_sections"),
        ),
    )
    op.create_index("ix_catalog_section_attributes_code", "catalog_section_attributes", ["code", "section_id"])
    op.create_table(
        "catalog_meeting_times",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("weekday", sa.SmallInteger(), nullable=True),
        sa.Column("start_minute", sa.SmallInteger(), nullable=True),
        sa.Column("end_minute", sa.SmallInteger(), nullable=True),
        sa.Column("start_date", sa.Date(), nullable=True),
        sa.Column("end_date", sa.Date(), nullable=True),
        sa.Column("building", sa.String(50), nullable=True),
        sa.Column("building_name", sa.String(200), nullable=True),
        sa.Column("room", sa.String(50), nullable=True),
        sa.Column("meeting_type", sa.String(50), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_meeting_times")),
        sa.ForeignKeyConstraint(
            ["section_id"],
            ["catalog_sections.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_meeting_times_section_id_catalog_sections"),
        ),
    )
    op.create_index("ix_catalog_meeting_times_section_id", "catalog_meeting_times", ["section_id"])
    op.create_index("ix_catalog_meeting_times_weekday_start", "catalog_meeting_times", ["weekday", "start_minute"])
    op.create_table(
        "catalog_instructors",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("pub_id", sa.String(40), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("department", sa.String(200), nullable=True),
        sa.Column("email", sa.String(200), nullable=True),
        sa.Column("rmp_id", sa.String(40), nullable=True),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_instructors")),
        sa.UniqueConstraint("pub_id", name=op.f("uq_catalog_instructors_pub_id")),
    )
    op.create_index("ix_catalog_instructors_name", "catalog_instructors", ["name"])
    op.create_table(
        "catalog_section_instructors",
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("is_primary", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("section_id", "instructor_id", name=op.f("pk_catalog_section_instructors")),
        sa.ForeignKeyConstraint(
            ["section_id"],
            ["catalog_sections.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_section_instructors_section_id_catalog_sections"),
        ),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["catalog_instructors.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_section_instructors_instructor_id_catalog_instructors"),
        ),
    )
    op.create_index("ix_catalog_section_instructors_instructor_id", "catalog_section_instructors", ["instructor_id"])
    op.create_table(
        "catalog_instructor_ratings",
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("overall", sa.Float(), nullable=True),
        sa.Column("difficulty", sa.Float(), nullable=True),
        sa.Column("would_take_again_percent", sa.Float(), nullable=True),
        sa.Column("rating_count", sa.Integer(), nullable=False),
        sa.Column("distribution", sa.JSON(), nullable=True),
        sa.Column("tag_counts", sa.JSON(), nullable=True),
        _timestamp("fetched_at"),
        sa.PrimaryKeyConstraint("instructor_id", name=op.f("pk_catalog_instructor_ratings")),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["catalog_instructors.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_instructor_ratings_instructor_id_catalog_instructors"),
        ),
    )
    op.create_table(
        "catalog_reviews",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("course_code", sa.String(40), nullable=True),
        sa.Column("posted_on", sa.Date(), nullable=False),
        sa.Column("overall", sa.Float(), nullable=True),
        sa.Column("difficulty", sa.Float(), nullable=True),
        sa.Column("would_take_again", sa.Boolean(), nullable=True),
        sa.Column("grade", sa.String(20), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("sentiment", sa.Float(), nullable=True),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_reviews")),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["catalog_instructors.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_reviews_instructor_id_catalog_instructors"),
        ),
    )
    op.create_index("ix_catalog_reviews_instructor_id_posted_on", "catalog_reviews", ["instructor_id", "posted_on"])
    op.create_index("ix_catalog_reviews_course_code", "catalog_reviews", ["course_code"])
    op.create_table(
        "catalog_years",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("label", sa.String(20), nullable=False),
        sa.Column("start_year", sa.Integer(), nullable=False),
        _timestamp("imported_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_years")),
        sa.UniqueConstraint("label", name=op.f("uq_catalog_years_label")),
    )
    op.create_table(
        "catalog_programs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("catalog_year_id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(200), nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("school", sa.String(200), nullable=True),
        sa.Column("degree", sa.String(100), nullable=True),
        sa.Column("url", sa.String(500), nullable=True),
        sa.Column("total_credits", sa.Float(), nullable=True),
        sa.Column("plans_of_study", sa.JSON(), nullable=False),
        sa.Column("elective_lists", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_programs")),
        sa.ForeignKeyConstraint(
            ["catalog_year_id"],
            ["catalog_years.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_programs_catalog_year_id_catalog_years"),
        ),
        sa.UniqueConstraint("catalog_year_id", "slug", name=op.f("uq_catalog_programs_catalog_year_id")),
    )
    op.create_table(
        "catalog_term_elective_lists",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("school", sa.String(200), nullable=False),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("url", sa.String(500), nullable=False),
        _timestamp("fetched_at"),
        sa.Column("course_headings", sa.JSON(), nullable=False),
        sa.Column("full_text", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_term_elective_lists")),
        sa.ForeignKeyConstraint(
            ["term_id"],
            ["catalog_terms.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_term_elective_lists_term_id_catalog_terms"),
        ),
        sa.UniqueConstraint("term_id", "url", name=op.f("uq_catalog_term_elective_lists_term_id")),
    )
    op.create_table(
        "catalog_university_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("source_uid", sa.String(300), nullable=True),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("start_date", sa.Date(), nullable=False),
        sa.Column("end_date", sa.Date(), nullable=False),
        sa.Column("all_day", sa.Boolean(), nullable=False),
        _timestamp("starts_at"),
        _timestamp("ends_at"),
        sa.Column("category", sa.String(50), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("location", sa.String(300), nullable=True),
        _timestamp("last_fetched_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_university_events")),
        sa.UniqueConstraint("source_uid", name=op.f("uq_catalog_university_events_source_uid")),
    )
    op.create_index("ix_catalog_university_events_start_date", "catalog_university_events", ["start_date"])
    op.create_table(
        "catalog_finals_schedules",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("source_name", sa.String(300), nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        _timestamp("loaded_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_finals_schedules")),
        sa.ForeignKeyConstraint(
            ["term_id"],
            ["catalog_terms.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_finals_schedules_term_id_catalog_terms"),
        ),
    )
    op.create_table(
        "catalog_final_exams",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("schedule_id", sa.Integer(), nullable=False),
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("crn", sa.String(20), nullable=True),
        sa.Column("course_code", sa.String(40), nullable=True),
        sa.Column("exam_date", sa.Date(), nullable=False),
        sa.Column("start_minute", sa.SmallInteger(), nullable=True),
        sa.Column("end_minute", sa.SmallInteger(), nullable=True),
        sa.Column("building", sa.String(50), nullable=True),
        sa.Column("room", sa.String(50), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_final_exams")),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["catalog_finals_schedules.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_final_exams_schedule_id_catalog_finals_schedules"),
        ),
        sa.ForeignKeyConstraint(
            ["term_id"],
            ["catalog_terms.id"],
            ondelete="CASCADE",
            name=op.f("fk_catalog_final_exams_term_id_catalog_terms"),
        ),
    )
    op.create_index("ix_catalog_final_exams_term_id_crn", "catalog_final_exams", ["term_id", "crn"])
    op.create_index("ix_catalog_final_exams_term_id_course_code", "catalog_final_exams", ["term_id", "course_code"])
    _create_full_text()


def _create_full_text() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        # Every name below comes from _SQLITE_FTS in this file, never from input (hence noqa S608).
        for fts, (table, columns) in _SQLITE_FTS.items():
            cols = ", ".join(columns)
            new_values = ", ".join(f"new.{c}" for c in columns)
            old_values = ", ".join(f"old.{c}" for c in columns)
            op.execute(
                f"CREATE VIRTUAL TABLE {fts} USING fts5({cols}, content='{table}', content_rowid='id', "
                "tokenize='porter unicode61 remove_diacritics 2')"
            )
            op.execute(
                f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN "  # noqa: S608
                f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_values}); END"
            )
            op.execute(
                f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN "  # noqa: S608
                f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_values}); END"
            )
            # Only a change of the indexed text touches the index; embedding and seat writes do not.
            op.execute(
                f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {cols} ON {table} BEGIN "  # noqa: S608
                f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_values}); "
                f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_values}); END"
            )
    elif dialect == "postgresql":
        op.execute(
            "CREATE INDEX ix_catalog_courses_fts ON catalog_courses "
            f"USING gin (to_tsvector('english', {_PG_COURSE_DOCUMENT}))"
        )
        op.execute(
            "CREATE INDEX ix_catalog_reviews_fts ON catalog_reviews "
            f"USING gin (to_tsvector('english', {_PG_REVIEW_DOCUMENT}))"
        )


def _drop_full_text() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for fts in _SQLITE_FTS:
            for suffix in ("ai", "ad", "au"):
                op.execute(f"DROP TRIGGER IF EXISTS {fts}_{suffix}")
            op.execute(f"DROP TABLE IF EXISTS {fts}")
    elif dialect == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_catalog_reviews_fts")
        op.execute("DROP INDEX IF EXISTS ix_catalog_courses_fts")


def downgrade() -> None:
    _drop_full_text()
    for table in (
        "catalog_final_exams",
        "catalog_finals_schedules",
        "catalog_university_events",
        "catalog_term_elective_lists",
        "catalog_programs",
        "catalog_years",
        "catalog_reviews",
        "catalog_instructor_ratings",
        "catalog_section_instructors",
        "catalog_instructors",
        "catalog_meeting_times",
        "catalog_section_attributes",
        "catalog_sections",
        "catalog_courses",
        "catalog_subjects",
        "catalog_campuses",
        "catalog_parts_of_term",
        "catalog_terms",
    ):
        op.drop_table(table)
