"""The feed's secret: 32 random bytes, URL-safe, shown to the student once and stored only as
its SHA-256, so a copy of the database cannot read anyone's calendar. One feed per student:
regenerating replaces the hash (the old URL stops at once), turning it off deletes the row."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime

from campus_mcp import Base, UTCDateTime, utcnow
from sqlalchemy import ForeignKey, String, delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

TOKEN_BYTES = 32
# token_urlsafe(32) is 43 characters of [A-Za-z0-9_-]; anything else is no token of ours.
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{43}$")


class CalendarFeed(Base):
    """A student's calendar feed: the hash of its secret and when it was made (listed on Settings)."""

    __tablename__ = "settings_calendar_feeds"

    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


async def issue(session: AsyncSession, student_id: int) -> str:
    """A new secret for ``student_id``'s feed, replacing any old one. Flushes; the caller commits.
    The returned token is the only copy: show it, never log it."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    feed = await session.get(CalendarFeed, student_id)
    if feed is None:
        session.add(CalendarFeed(student_id=student_id, token_sha256=digest(token), created_at=utcnow()))
    else:
        feed.token_sha256, feed.created_at = digest(token), utcnow()
    await session.flush()
    return token


async def turn_off(session: AsyncSession, student_id: int) -> bool:
    """Delete the student's feed; False when there was none. Flushes; the caller commits."""
    result = await session.execute(delete(CalendarFeed).where(CalendarFeed.student_id == student_id))
    return bool(getattr(result, "rowcount", 0))


async def feed_of(session: AsyncSession, student_id: int) -> CalendarFeed | None:
    return await session.get(CalendarFeed, student_id)


async def student_of(session: AsyncSession, token: str) -> CalendarFeed | None:
    """The feed whose secret is ``token``, or None (a malformed token is not looked up at all).
    The lookup is by hash, so the comparison never touches the secret itself."""
    if not TOKEN_SHAPE.match(token):
        return None
    return await session.scalar(select(CalendarFeed).where(CalendarFeed.token_sha256 == digest(token)))
