"""The schedule family's tables: which sections each student takes, and the students' own events.

Table names start with ``schedule_`` because every plugin shares one database. The sections
themselves stay the catalog's (``catalog_sections``): an enrollment points at one, so a course's
title, meetings and rooms are never copied and never go stale here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from campus_mcp import Base, UTCDateTime, utcnow
from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

# Who put a section on a student's schedule. Only the feed may take "feed" rows away again
# (a term the feed calls complete); the student's own additions are never touched by it.
EnrollmentSource = Literal["student", "feed", "demo"]
SOURCES: tuple[EnrollmentSource, ...] = ("student", "feed", "demo")


class Enrollment(Base):
    """One section on one student's schedule. ``term_uid`` and ``crn`` repeat the section's own
    so that a term's list and the feed's comparisons are one indexed lookup without a join."""

    __tablename__ = "schedule_enrollments"
    __table_args__ = (
        UniqueConstraint("student_id", "section_id"),
        Index("ix_schedule_enrollments_student_term", "student_id", "term_uid"),
        Index("ix_schedule_enrollments_section_id", "section_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    term_uid: Mapped[str] = mapped_column(String(20))
    section_id: Mapped[int] = mapped_column(ForeignKey("catalog_sections.id", ondelete="CASCADE"))
    crn: Mapped[str] = mapped_column(String(20))
    source: Mapped[str] = mapped_column(String(20), default="student")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class StudentEvent(Base):
    """An event a student made (a meeting with friends). Times are aware UTC datetimes."""

    __tablename__ = "schedule_events"
    __table_args__ = (Index("ix_schedule_events_owner_start", "owner_id", "starts_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class StudentEventAttendee(Base):
    """A student invited to an event (not the owner, who is on ``StudentEvent.owner_id``)."""

    __tablename__ = "schedule_event_attendees"
    __table_args__ = (Index("ix_schedule_event_attendees_student_id", "student_id"),)

    event_id: Mapped[int] = mapped_column(ForeignKey("schedule_events.id", ondelete="CASCADE"), primary_key=True)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), primary_key=True)


class SeatWatch(Base):
    """A student's wish to hear when a full section has a seat (watch_section). The news is read
    from the section's seats now, on the next answer of list_watches, my_courses and the schedule
    page, and at once on a listen stream of the section or of the schedule; and, where the campus
    sends e-mail, each opening is e-mailed once (``SeatMail``, campus_schedule.seat_mail)."""

    __tablename__ = "schedule_seat_watches"
    __table_args__ = (
        UniqueConstraint("student_id", "section_id", name="uq_schedule_seat_watches_student_id"),
        Index("ix_schedule_seat_watches_student_term", "student_id", "term_uid"),
        Index("ix_schedule_seat_watches_section_id", "section_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    term_uid: Mapped[str] = mapped_column(String(20))
    section_id: Mapped[int] = mapped_column(ForeignKey("catalog_sections.id", ondelete="CASCADE"))
    crn: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The section had a seat when last looked at; moved only by a conditional UPDATE, which is the
    # claim of an opening (one worker wins it). ``openings`` counts the openings seen.
    seat_open_seen: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    openings: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


# pending: to send (at next_attempt_at); sending: a worker claimed it; sent; failed: given up (or
# nowhere to send), shown on the student's watches page.
SeatMailStatus = Literal["pending", "sending", "sent", "failed"]


class SeatMail(Base):
    """The e-mail of one opening of one watch: the outbox row a worker claims before it sends."""

    __tablename__ = "schedule_seat_mail"
    __table_args__ = (
        UniqueConstraint("watch_id", "opening", name="uq_schedule_seat_mail_watch_opening"),
        Index("ix_schedule_seat_mail_status", "status", "next_attempt_at"),
        Index("ix_schedule_seat_mail_student_id", "student_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    watch_id: Mapped[int] = mapped_column(ForeignKey("schedule_seat_watches.id", ondelete="CASCADE"))
    opening: Mapped[int] = mapped_column(Integer)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    sent_to: Mapped[str | None] = mapped_column(String(320), nullable=True)
    seats: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
