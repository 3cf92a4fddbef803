"""The friends table: one row per pair of students, a pending request or an accepted friendship.

A pair is stored once, in id order (``low_student_id`` < ``high_student_id``), so a single unique
constraint stops a second row for the same two students whichever of them asked first;
``requester_id`` says who asked. Declining a request or removing a friend deletes the row, so
nothing of a past friendship is left that a query could still read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from campus_mcp import Base, UTCDateTime, utcnow
from sqlalchemy import CheckConstraint, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.elements import conv  # the name as written: the migration creates the same one

FriendshipStatus = Literal["pending", "accepted"]
PENDING: FriendshipStatus = "pending"
ACCEPTED: FriendshipStatus = "accepted"


class Friendship(Base):
    __tablename__ = "friendships"
    __table_args__ = (
        UniqueConstraint("low_student_id", "high_student_id", name="uq_friendships_pair"),
        CheckConstraint("low_student_id < high_student_id", name=conv("ck_friendships_pair_order")),
        CheckConstraint("status IN ('pending', 'accepted')", name=conv("ck_friendships_status")),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    low_student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), index=True)
    high_student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), index=True)
    requester_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    def other(self, student_id: int) -> int:
        """The other student of the pair."""
        return self.high_student_id if student_id == self.low_student_id else self.low_student_id


class FriendCode(Base):
    """A student's friend code: what a friend types to send them a request (campus_friends.codes).

    One per student, made the first time their Friends page is shown. A student of the campus
    sign-in has their campus id as username, which must never be how others find them."""

    __tablename__ = "friend_codes"

    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), primary_key=True)
    code: Mapped[str] = mapped_column(String(16), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
