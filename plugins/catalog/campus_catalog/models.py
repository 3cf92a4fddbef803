"""The public course catalog as tables: terms, sections and their meetings, courses, instructors,
reviews, programs, elective lists, the academic calendar and final exams.

Every table name starts with ``catalog_`` because every plugin shares one database, and the
schedule family has courses and meeting times of its own.

Conventions that hold across the module (importers and the demo generator rely on them):

- Times of day are whole minutes after midnight in the campus time zone (``Settings.timezone``):
  ``start_minute=600`` is 10:00 AM. Banner gives ``"1000"`` strings; minutes make overlap and
  "ends before" arithmetic plain integer comparisons on both backends.
- Timestamps are :class:`campus_mcp.base.db.UTCDateTime` (aware, UTC). Dates are plain dates.
- A course code is ``"<subject_code> <course_number>"``, for example ``"COMP 2350"``.
- Null means "not known", never "none": ``waitlist_capacity=None`` is a waitlist the campus has
  not read yet, ``0`` is a section without a waitlist (seed 000, "Waitlists").
- Vectors for meaning search are float32 little-endian bytes (``numpy.ndarray.tobytes()``) in
  the nullable ``embedding`` columns, written by :mod:`campus_catalog.semantic`.

Full-text search (words) lives beside the tables and is created by the migration, not by these
classes: SQLite FTS5 tables ``catalog_courses_fts`` and ``catalog_reviews_fts`` (external content,
kept in sync by triggers), and on PostgreSQL GIN indexes over the tsvector expressions below.
Queries must use exactly these expressions so PostgreSQL picks the index.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from campus_mcp import Base, UTCDateTime
from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

# The text config and documents of the PostgreSQL full-text indexes (see the migration).
PG_TEXT_CONFIG = "english"
PG_COURSE_DOCUMENT = "coalesce(title, '') || ' ' || coalesce(description, '')"
PG_REVIEW_DOCUMENT = "coalesce(text, '')"

# Weekday numbers follow ``date.weekday()``; the letters are Banner's (R is Thursday, U Sunday).
DAY_LETTERS = "MTWRFSU"


class Term(Base):
    """A Banner term. ``uid`` is the Banner term code (``202710``).

    Which term is current and which is next is derived from the dates and today's date in the
    campus time zone (``campus_catalog.queries.terms``), so it never goes stale. A term that
    ``EnsureFutureTerms`` made before Banner lists it simply has no sections yet.
    """

    __tablename__ = "catalog_terms"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(String(20), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    start_date: Mapped[date] = mapped_column(Date)
    end_date: Mapped[date] = mapped_column(Date)
    registration_opens_on: Mapped[date | None] = mapped_column(Date, nullable=True)
    registration_closes_on: Mapped[date | None] = mapped_column(Date, nullable=True)
    # When a full sync of the term's sections finished (data source "sections").
    sections_synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # When a catalog import (file or demo) finished the term; also counts for "sections".
    catalog_imported_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # When the course details sync finished the term (data source "course_details").
    details_synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    parts: Mapped[list[PartOfTerm]] = relationship(back_populates="term", lazy="raise")


class PartOfTerm(Base):
    """A Banner part of term: the full term (``1``) or a shorter session inside it."""

    __tablename__ = "catalog_parts_of_term"
    __table_args__ = (UniqueConstraint("term_id", "code"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    term_id: Mapped[int] = mapped_column(ForeignKey("catalog_terms.id", ondelete="CASCADE"))
    code: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(200))
    start_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    end_date: Mapped[date | None] = mapped_column(Date, nullable=True)

    term: Mapped[Term] = relationship(back_populates="parts", lazy="raise")


class Campus(Base):
    """A campus (or "Online") that sections are offered at."""

    __tablename__ = "catalog_campuses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(20), unique=True)
    name: Mapped[str] = mapped_column(String(200))


class Subject(Base):
    """A subject (``COMP``). ``school`` is the school whose dean's office gives its overrides."""

    __tablename__ = "catalog_subjects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(20), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    school: Mapped[str | None] = mapped_column(String(200), nullable=True)


class Course(Base):
    """A catalog course (not a section). JSON shapes, as the importers write them:

    - ``prerequisites``: a tree of groups and leaves, or null when there are none::

        {"op": "and", "items": [
            {"course": "MATH 1750", "min_grade": "C"},
            {"op": "or", "items": [{"course": "COMP 1000"}, {"test": "Placement", "min_score": "60"}]}]}

      A leaf has ``course`` (a course code) or ``test``; ``min_grade`` is optional (seed 000,
      "Minimum grades"). ``concurrent: true`` on a leaf means it may be taken at the same time.
    - ``corequisites`` and ``mutual_exclusions``: lists of course codes.
    - ``restrictions``: a list of ``{"kind": "include"|"exclude", "type": "major"|"level"|
      "class"|"program"|"college"|..., "values": [str, ...]}``.
    - ``fees``: a list of ``{"description": str, "amount": float}``.
    - ``learning_objectives`` and ``terms_offered`` (``"Fall"``, ``"Spring"``, ``"Summer"``): lists of str.

    What a course unlocks is derived: the courses whose prerequisite tree names this code.
    """

    __tablename__ = "catalog_courses"
    __table_args__ = (UniqueConstraint("subject_code", "course_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subject_code: Mapped[str] = mapped_column(ForeignKey("catalog_subjects.code", ondelete="CASCADE"))
    course_number: Mapped[str] = mapped_column(String(20))
    title: Mapped[str] = mapped_column(String(300))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    credits_min: Mapped[float | None] = mapped_column(Float, nullable=True)
    credits_max: Mapped[float | None] = mapped_column(Float, nullable=True)
    prerequisites: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    corequisites: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    restrictions: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    mutual_exclusions: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    catalog_entry: Mapped[str | None] = mapped_column(Text, nullable=True)
    fees: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    learning_objectives: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    terms_offered: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # Per course, so the daily run can skip courses read in the last 7 days.
    details_synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)

    subject: Mapped[Subject] = relationship(lazy="raise")

    @property
    def code(self) -> str:
        return f"{self.subject_code} {self.course_number}"


class Section(Base):
    """A section of a course in a term. ``crn`` is unique within its term only.

    ``cross_listed_crns`` are the other CRNs of the same cross-list group (same room, same
    meetings, different course codes). ``linked_crns`` are the sections Banner requires together
    with this one (the labs of a lecture, the lecture of a lab); ``link_identifier`` is Banner's
    group letter for them.
    """

    __tablename__ = "catalog_sections"
    __table_args__ = (
        UniqueConstraint("term_id", "crn"),
        Index("ix_catalog_sections_course_id", "course_id"),
        Index("ix_catalog_sections_term_id_course_id", "term_id", "course_id"),
        # A term's count from a narrow index, not the wide listing one (catalog_0007).
        Index("ix_catalog_sections_term_count", "term_id", "cancelled"),
        # A few instructors' sections of a term, from their ids, with what the page orders and
        # filters by, without reading the rows (catalog_0008).
        Index(
            "ix_catalog_sections_by_id",
            "id",
            "term_id",
            "cancelled",
            "course_id",
            "section_number",
            "crn",
            "seats_available",
        ),
        # get_section without a term: a CRN in any term (the unique index has the term first).
        Index("ix_catalog_sections_crn", "crn"),
        # The few sections with a title of their own, for a search by title words (catalog_0006).
        Index(
            "ix_catalog_sections_titled",
            "term_id",
            "title",
            sqlite_where=text("title IS NOT NULL"),
            postgresql_where=text("title IS NOT NULL"),
        ),
        # Covers listing, counting and paging a term's sections without reading the rows, which
        # carry a 1.5 KB vector each: at 100,000 sections a scan of the rows is what is slow.
        Index(
            "ix_catalog_sections_term_listing",
            "term_id",
            "cancelled",
            "course_id",
            "section_number",
            "crn",
            "seats_available",
            "title",
            # A days-and-times search reads these from the index too (migration catalog_0005).
            "meeting_days",
            "first_start_minute",
            "last_end_minute",
            # PostgreSQL's index has no row id of its own: with it, an index-only scan.
            "id",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    term_id: Mapped[int] = mapped_column(ForeignKey("catalog_terms.id", ondelete="CASCADE"))
    course_id: Mapped[int] = mapped_column(ForeignKey("catalog_courses.id", ondelete="CASCADE"))
    crn: Mapped[str] = mapped_column(String(20))
    section_number: Mapped[str] = mapped_column(String(20))
    # Only when the section has its own title (topics courses); else the course title applies.
    title: Mapped[str | None] = mapped_column(String(300), nullable=True)
    schedule_type: Mapped[str | None] = mapped_column(String(100), nullable=True)
    instructional_method: Mapped[str | None] = mapped_column(String(100), nullable=True)
    campus_id: Mapped[int | None] = mapped_column(ForeignKey("catalog_campuses.id"), nullable=True)
    part_of_term_id: Mapped[int | None] = mapped_column(ForeignKey("catalog_parts_of_term.id"), nullable=True)
    credits_min: Mapped[float | None] = mapped_column(Float, nullable=True)
    credits_max: Mapped[float | None] = mapped_column(Float, nullable=True)
    capacity: Mapped[int | None] = mapped_column(Integer, nullable=True)
    enrolled: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Banner can report negative seats (over-enrolled sections); kept as given.
    seats_available: Mapped[int | None] = mapped_column(Integer, nullable=True)
    waitlist_capacity: Mapped[int | None] = mapped_column(Integer, nullable=True)
    waitlist_available: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cancelled: Mapped[bool] = mapped_column(Boolean, default=False)
    cross_list_group: Mapped[str | None] = mapped_column(String(20), nullable=True)
    cross_listed_crns: Mapped[list[str]] = mapped_column(JSON, default=list)
    link_identifier: Mapped[str | None] = mapped_column(String(20), nullable=True)
    linked_crns: Mapped[list[str]] = mapped_column(JSON, default=list)
    # When a full read of this section from Banner last succeeded (the 36-hour refresh rule).
    banner_synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The seat refresh writes only seats and this, never banner_synced_at (seed 000).
    seats_synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    # What the section's meetings say, kept by triggers on catalog_meeting_times (never written
    # here): the days it meets (bit 1 << weekday), its earliest start and its latest end, so a
    # days-and-times search tests the row (its index entry) instead of probing its meetings.
    meeting_days: Mapped[int] = mapped_column(SmallInteger, server_default="0")
    first_start_minute: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    last_end_minute: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)

    term: Mapped[Term] = relationship(lazy="raise")
    course: Mapped[Course] = relationship(lazy="raise")
    campus: Mapped[Campus | None] = relationship(lazy="raise")
    part_of_term: Mapped[PartOfTerm | None] = relationship(lazy="raise")
    meeting_times: Mapped[list[MeetingTime]] = relationship(
        back_populates="section", lazy="raise", cascade="all, delete-orphan", order_by="MeetingTime.id"
    )
    instructor_links: Mapped[list[SectionInstructor]] = relationship(
        back_populates="section", lazy="raise", cascade="all, delete-orphan"
    )
    attributes: Mapped[list[SectionAttribute]] = relationship(
        back_populates="section", lazy="raise", cascade="all, delete-orphan"
    )


class SectionAttribute(Base):
    """A Banner section attribute (``HSS`` elective, ``HON``ors, ...). A row each, so the
    attribute filter is an indexed lookup rather than a scan of JSON."""

    __tablename__ = "catalog_section_attributes"
    __table_args__ = (Index("ix_catalog_section_attributes_code", "code", "section_id"),)

    section_id: Mapped[int] = mapped_column(ForeignKey("catalog_sections.id", ondelete="CASCADE"), primary_key=True)
    code: Mapped[str] = mapped_column(String(20), primary_key=True)
    description: Mapped[str | None] = mapped_column(String(200), nullable=True)

    section: Mapped[Section] = relationship(back_populates="attributes", lazy="raise")


class MeetingTime(Base):
    """One weekly class meeting on ONE day of the week (a MWF lecture is three rows).

    One row per day because that is the unit the rest of the platform works in: a class
    setting applies to one meeting on one day (seed 000, "Class settings"), "meets on" and
    "keep this day free" become indexed equality filters, and conflicts compare rows of the same
    day. Results group the rows back into patterns such as ``"MWF"``.

    ``weekday`` is null for a meeting with no fixed day (online asynchronous, TBA); start and
    end are null when Banner gives no times. A meeting can still carry a room and date range.
    """

    __tablename__ = "catalog_meeting_times"
    __table_args__ = (
        Index("ix_catalog_meeting_times_section_id", "section_id"),
        Index("ix_catalog_meeting_times_weekday_start", "weekday", "start_minute"),
        # The day and time filters ask, per section, about its meetings: answered from the index.
        Index("ix_catalog_meeting_times_section_times", "section_id", "weekday", "start_minute", "end_minute"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    section_id: Mapped[int] = mapped_column(ForeignKey("catalog_sections.id", ondelete="CASCADE"))
    weekday: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    start_minute: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    end_minute: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    start_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    end_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    building: Mapped[str | None] = mapped_column(String(50), nullable=True)
    building_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    room: Mapped[str | None] = mapped_column(String(50), nullable=True)
    # Banner's meeting type: "Class", "Lab", "Exam", ... (LEC/LAB codes map to descriptions).
    meeting_type: Mapped[str | None] = mapped_column(String(50), nullable=True)

    section: Mapped[Section] = relationship(back_populates="meeting_times", lazy="raise")


class Instructor(Base):
    """An instructor. ``pub_id`` is the public id in URLs and tool arguments (never a Banner id)."""

    __tablename__ = "catalog_instructors"
    # The name test of an instructor filter reads names and ids from the index alone (catalog_0007).
    __table_args__ = (Index("ix_catalog_instructors_name_id", "name", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pub_id: Mapped[str] = mapped_column(String(40), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    department: Mapped[str | None] = mapped_column(String(200), nullable=True)
    email: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # The RateMyProfessor teacher id the ratings and reviews came from, when known.
    rmp_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)

    rating: Mapped[InstructorRating | None] = relationship(back_populates="instructor", lazy="raise", uselist=False)


class SectionInstructor(Base):
    """Who teaches a section; ``is_primary`` marks Banner's primary instructor."""

    __tablename__ = "catalog_section_instructors"
    # An instructor's sections from the index alone (catalog_0007).
    __table_args__ = (Index("ix_catalog_section_instructors_by_instructor", "instructor_id", "section_id"),)

    section_id: Mapped[int] = mapped_column(ForeignKey("catalog_sections.id", ondelete="CASCADE"), primary_key=True)
    instructor_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_instructors.id", ondelete="CASCADE"), primary_key=True
    )
    is_primary: Mapped[bool] = mapped_column(Boolean, default=False)

    section: Mapped[Section] = relationship(back_populates="instructor_links", lazy="raise")
    instructor: Mapped[Instructor] = relationship(lazy="raise")


class InstructorRating(Base):
    """An instructor's RateMyProfessor summary. ``distribution`` counts ratings 1..5 as
    ``{"1": n, ..., "5": n}``; ``tag_counts`` is ``{"Tough grader": 12, ...}``."""

    __tablename__ = "catalog_instructor_ratings"

    instructor_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_instructors.id", ondelete="CASCADE"), primary_key=True
    )
    overall: Mapped[float | None] = mapped_column(Float, nullable=True)
    difficulty: Mapped[float | None] = mapped_column(Float, nullable=True)
    would_take_again_percent: Mapped[float | None] = mapped_column(Float, nullable=True)
    rating_count: Mapped[int] = mapped_column(Integer, default=0)
    distribution: Mapped[dict[str, int] | None] = mapped_column(JSON, nullable=True)
    tag_counts: Mapped[dict[str, int] | None] = mapped_column(JSON, nullable=True)
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    instructor: Mapped[Instructor] = relationship(back_populates="rating", lazy="raise")


class Review(Base):
    """One RateMyProfessor review. ``sentiment`` is -1 (complaint) .. 1 (praise)."""

    __tablename__ = "catalog_reviews"
    __table_args__ = (
        Index("ix_catalog_reviews_instructor_id_posted_on", "instructor_id", "posted_on"),
        Index("ix_catalog_reviews_course_code", "course_code"),
        # Newest first with a sentiment filter, and counts by sentiment, without reading the rows.
        Index("ix_catalog_reviews_posted_on_sentiment", "posted_on", "sentiment"),
        Index("ix_catalog_reviews_sentiment", "sentiment"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instructor_id: Mapped[int] = mapped_column(ForeignKey("catalog_instructors.id", ondelete="CASCADE"))
    # As the reviewer wrote it, normalised to "SUBJ 1234" when it looks like a code.
    course_code: Mapped[str | None] = mapped_column(String(40), nullable=True)
    posted_on: Mapped[date] = mapped_column(Date)
    overall: Mapped[float | None] = mapped_column(Float, nullable=True)
    difficulty: Mapped[float | None] = mapped_column(Float, nullable=True)
    would_take_again: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    grade: Mapped[str | None] = mapped_column(String(20), nullable=True)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    text: Mapped[str] = mapped_column(Text, default="")
    sentiment: Mapped[float | None] = mapped_column(Float, nullable=True)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)

    instructor: Mapped[Instructor] = relationship(lazy="raise")


class CatalogYear(Base):
    """An academic catalog year (``2026-2027``). ``imported_at`` feeds "degree_requirements"."""

    __tablename__ = "catalog_years"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    label: Mapped[str] = mapped_column(String(20), unique=True)
    start_year: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Program(Base):
    """A degree program in one catalog year. Read whole by ``degree_requirements``, so the plans
    and elective lists are JSON documents:

    - ``plans_of_study``: ``[{"name": str, "semesters": [{"label": "Year 1 Fall", "courses":
      [{"code": "COMP 1000"|null, "title": str, "credits": float|null}]}]}]`` (an elective slot
      has ``code`` null and a title such as "HSS Elective").
    - ``elective_lists``: ``[{"name": str, "courses": [str, ...], "notes": str|null}]``.
    """

    __tablename__ = "catalog_programs"
    __table_args__ = (UniqueConstraint("catalog_year_id", "slug"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    catalog_year_id: Mapped[int] = mapped_column(ForeignKey("catalog_years.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(200))
    name: Mapped[str] = mapped_column(String(300))
    school: Mapped[str | None] = mapped_column(String(200), nullable=True)
    degree: Mapped[str | None] = mapped_column(String(100), nullable=True)
    url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    total_credits: Mapped[float | None] = mapped_column(Float, nullable=True)
    plans_of_study: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    elective_lists: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)

    catalog_year: Mapped[CatalogYear] = relationship(lazy="raise")


class TermElectiveList(Base):
    """An elective list a school published for a term (a PDF at ``url``).

    ``course_headings``: ``[{"code": "COMP 4960"|null, "title": str, "crns": [str, ...]}]``, the
    heading of each course in the list; ``full_text`` is the whole text of the PDF.
    """

    __tablename__ = "catalog_term_elective_lists"
    __table_args__ = (UniqueConstraint("term_id", "url"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    term_id: Mapped[int] = mapped_column(ForeignKey("catalog_terms.id", ondelete="CASCADE"))
    school: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(String(300))
    url: Mapped[str] = mapped_column(String(500))
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    course_headings: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    full_text: Mapped[str] = mapped_column(Text, default="")

    term: Mapped[Term] = relationship(lazy="raise")


class UniversityEvent(Base):
    """An academic calendar event: a holiday, a deadline, finals week.

    All-day events use the dates only (``end_date`` inclusive); timed ones also have
    ``starts_at``/``ends_at``. ``source_uid`` is the iCalendar UID, so a re-import updates.
    """

    __tablename__ = "catalog_university_events"
    __table_args__ = (Index("ix_catalog_university_events_start_date", "start_date"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_uid: Mapped[str | None] = mapped_column(String(300), unique=True, nullable=True)
    title: Mapped[str] = mapped_column(String(500))
    start_date: Mapped[date] = mapped_column(Date)
    end_date: Mapped[date] = mapped_column(Date)
    all_day: Mapped[bool] = mapped_column(Boolean, default=True)
    starts_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    ends_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # "holiday", "deadline", "finals", "term", "registration", "event", ...
    category: Mapped[str | None] = mapped_column(String(50), nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    location: Mapped[str | None] = mapped_column(String(300), nullable=True)
    last_fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class FinalsSchedule(Base):
    """One upload of a term's finals schedule. The newest with ``status="completed"`` counts,
    and its ``loaded_at`` is the "finals" data source's last refresh."""

    __tablename__ = "catalog_finals_schedules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    term_id: Mapped[int] = mapped_column(ForeignKey("catalog_terms.id", ondelete="CASCADE"))
    source_name: Mapped[str | None] = mapped_column(String(300), nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="completed")
    loaded_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    exams: Mapped[list[FinalExam]] = relationship(back_populates="schedule", lazy="raise", cascade="all, delete-orphan")


class FinalExam(Base):
    """A final exam of one section (by CRN) or of every section of a course (by code)."""

    __tablename__ = "catalog_final_exams"
    __table_args__ = (
        Index("ix_catalog_final_exams_term_id_crn", "term_id", "crn"),
        Index("ix_catalog_final_exams_term_id_course_code", "term_id", "course_code"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    schedule_id: Mapped[int] = mapped_column(ForeignKey("catalog_finals_schedules.id", ondelete="CASCADE"))
    term_id: Mapped[int] = mapped_column(ForeignKey("catalog_terms.id", ondelete="CASCADE"))
    crn: Mapped[str | None] = mapped_column(String(20), nullable=True)
    course_code: Mapped[str | None] = mapped_column(String(40), nullable=True)
    exam_date: Mapped[date] = mapped_column(Date)
    start_minute: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    end_minute: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    building: Mapped[str | None] = mapped_column(String(50), nullable=True)
    room: Mapped[str | None] = mapped_column(String(50), nullable=True)

    schedule: Mapped[FinalsSchedule] = relationship(back_populates="exams", lazy="raise")
