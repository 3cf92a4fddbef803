"""The one table of the Canvas family: a student's Canvas connection.

The tokens are kept sealed (``campus_mcp.seal_secret``, bound to the student), never in the clear:
a copy of the database is not a copy of anyone's Canvas access. A token Canvas stopped taking (revoked
there, or a refresh refused) empties both token columns and sets ``lost_at``: the student is told to
connect again instead of being told they never did.

A ``demo`` row is a demo student's connection to the demo Canvas (``demo_canvas.py``), made by the
demo loader: it has no tokens (the demo Canvas takes its own), and it connects nothing outside demo
mode, where the student is asked to connect to the campus's Canvas.
"""

from __future__ import annotations

from datetime import datetime

from campus_mcp import Base, UTCDateTime, utcnow
from sqlalchemy import Boolean, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column


class CanvasConnection(Base):
    __tablename__ = "canvas_connections"

    student_id: Mapped[int] = mapped_column(ForeignKey("students.id", ondelete="CASCADE"), primary_key=True)
    # Who the student is in Canvas (the token answer's user): shown on the dashboard, in the export.
    canvas_user_id: Mapped[str] = mapped_column(String(64))
    canvas_user_name: Mapped[str] = mapped_column(String(200), default="")
    access_token: Mapped[str | None] = mapped_column(Text, nullable=True)
    refresh_token: Mapped[str | None] = mapped_column(Text, nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The scopes asked for (space-separated; empty when the developer key does not enforce scopes).
    scopes: Mapped[str] = mapped_column(Text, default="")
    connected_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    lost_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    demo: Mapped[bool] = mapped_column(Boolean, default=False)
    # The student's choice: their due work in their calendar feed (off until they turn it on).
    feed_due_work: Mapped[bool] = mapped_column(Boolean, default=False)
