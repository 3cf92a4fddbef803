"""The dining tables: halls and their weekly opening hours."""

from __future__ import annotations

from datetime import datetime, time

from campus_mcp import Base, UTCDateTime
from sqlalchemy import ForeignKey, Integer, String, Text, Time
from sqlalchemy.orm import Mapped, mapped_column, relationship


class DiningHall(Base):
    __tablename__ = "dining_halls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    building: Mapped[str | None] = mapped_column(String(200), nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    hours: Mapped[list[DiningHours]] = relationship(
        back_populates="hall", cascade="all, delete-orphan", order_by="(DiningHours.weekday, DiningHours.opens)"
    )


class DiningHours(Base):
    """One opening of a hall on one weekday; a hall can open several times a day (lunch, dinner)."""

    __tablename__ = "dining_hours"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hall_id: Mapped[int] = mapped_column(ForeignKey("dining_halls.id", ondelete="CASCADE"), index=True)
    weekday: Mapped[int] = mapped_column(Integer)  # 0 = Monday, as datetime.weekday()
    opens: Mapped[time] = mapped_column(Time())
    closes: Mapped[time] = mapped_column(Time())
    hall: Mapped[DiningHall] = relationship(back_populates="hours")
