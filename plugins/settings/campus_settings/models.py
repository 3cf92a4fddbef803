"""The settings family's tables. Names start with ``settings_`` (one database for every plugin).

Each row carries only the fields the student set: a null column means "not set here", so the
level below applies (seed 000 "Class settings"). ``reminders`` is a JSON list of minutes; an
empty list is a setting (no reminders), null is not. ``version`` goes up by one with every save:
a save writes only when the version it read is still the row's (no lost update when two clients
change the same row at once), and the confirmation question is bound to it.
"""

from __future__ import annotations

from datetime import datetime

from campus_mcp import Base, UTCDateTime, utcnow
from sqlalchemy import JSON, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

# The columns every settings row has, in the order answers and messages show them.
FIELDS = ("title_template", "description_template", "location_template", "color", "visibility", "reminders")


class _SettingColumns:
    title_template: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    description_template: Mapped[str | None] = mapped_column(String(4000), nullable=True)
    location_template: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    color: Mapped[str | None] = mapped_column(String(20), nullable=True)
    visibility: Mapped[str | None] = mapped_column(String(20), nullable=True)
    reminders: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ClassSetting(_SettingColumns, Base):
    """A class setting: one student's settings of one weekly class meeting (level "individual")."""

    __tablename__ = "settings_class_settings"
    __table_args__ = (UniqueConstraint("student_id", "meeting_time_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    meeting_time_id: Mapped[int] = mapped_column(ForeignKey("catalog_meeting_times.id", ondelete="CASCADE"))


class LevelSetting(_SettingColumns, Base):
    """One student's settings of one level: ``all_classes``, a kind of class (``lecture``,
    ``laboratory``, ...), ``final_exam``, ``university_events`` or ``university_events:<category>``."""

    __tablename__ = "settings_level_settings"
    __table_args__ = (UniqueConstraint("student_id", "level"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"))
    level: Mapped[str] = mapped_column(String(80))


class NotificationSetting(Base):
    """Whether a student's reminders are paused, and until when (null: until they turn them on)."""

    __tablename__ = "settings_notifications"

    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), primary_key=True)
    paused: Mapped[bool] = mapped_column(default=False)
    paused_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
