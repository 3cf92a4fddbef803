"""Confirmation on the server's own page (issue 39, point 1): the change waits for the student.

A write tool called by a client that cannot show the student a form (``confirmation_fallback =
"page"``, the default) changes nothing. The change it would make is written down here, in the
database so every worker sees the same one: the student, the tool, the exact arguments, the
question's text and digest, the record's version, an expiry and a state. The tool answers the
question and a link to ``/confirm/{id}`` on the server's public URL; the page
(campus_mcp.dashboard.confirmation_routes) needs the student's signed-in browser session, shows the question,
and its Confirm makes the change once.

Why a page: the in-band code (campus_mcp.mcp.confirmation_code) and form elicitation both go back
through the client, so a client or model that skips the question can confirm by itself. Here the
client holds only the link, and the link is worth nothing without the student's browser session
and the page's CSRF token (a bearer token is never accepted on pages: campus_mcp.oauth.session).

Exactly once across workers: Confirm moves the row from ``pending`` to ``applying`` with one
conditional UPDATE; only the request whose UPDATE changed the row runs the change, any other one
(a second click, a second worker, a replayed POST) reads the state and says what happened.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Integer, String, Text, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.base.db import Base, UTCDateTime, utcnow
from campus_mcp.plugin.confirmation import PlannedChange, digest

# A page waits longer than a requestState: the student may have to sign in first.
PAGE_TTL_SECONDS = 900
PAGE_PATH = "/confirm"
# The states of a pending change; only pending can be confirmed or cancelled.
State = Literal["pending", "applying", "done", "cancelled", "failed", "stale"]
ID_BYTES = 24


class PendingConfirmation(Base):
    """One change waiting for the student on the confirmation page."""

    __tablename__ = "pending_confirmations"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    # Not a foreign key, as idempotency_keys: a row lives a day past its 15 minutes (docs/privacy.md).
    student_id: Mapped[int] = mapped_column(Integer, index=True)
    tool: Mapped[str] = mapped_column(String(200))
    # The tool's own arguments as validated JSON (no idempotency key, no code): exactly what runs.
    arguments: Mapped[str] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text)
    message_digest: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(20), default="pending")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


def page_url(base_url: str, pending_id: str) -> str:
    return f"{base_url}{PAGE_PATH}/{pending_id}"


async def create(
    sessions: async_sessionmaker[AsyncSession],
    student_id: int,
    tool: str,
    arguments: Mapping[str, Any],
    plan: PlannedChange,
) -> PendingConfirmation:
    now = utcnow()
    row = PendingConfirmation(
        id=secrets.token_urlsafe(ID_BYTES),
        student_id=student_id,
        tool=tool,
        arguments=json.dumps(dict(arguments), sort_keys=True, separators=(",", ":")),
        message=plan.message,
        message_digest=digest(plan.message),
        version=plan.version,
        state="pending",
        created_at=now,
        expires_at=now + timedelta(seconds=PAGE_TTL_SECONDS),
    )
    async with sessions() as session:
        session.add(row)
        await session.commit()
    return row


async def find(sessions: async_sessionmaker[AsyncSession], pending_id: str) -> PendingConfirmation | None:
    if not pending_id or len(pending_id) > 64:
        return None
    async with sessions() as session:
        return await session.scalar(select(PendingConfirmation).where(PendingConfirmation.id == pending_id))


def expired(row: PendingConfirmation) -> bool:
    return row.expires_at <= utcnow()


def matches(row: PendingConfirmation, plan: PlannedChange) -> bool:
    """The question the student sees on the page is still the one the change would ask now."""
    return row.message_digest == digest(plan.message) and row.version == plan.version


async def claim(sessions: async_sessionmaker[AsyncSession], pending_id: str, student_id: int, to: State) -> bool:
    """Move a pending, unexpired change of this student to ``to``; True for the one request that did."""
    async with sessions() as session:
        result = await session.execute(
            update(PendingConfirmation)
            .where(
                PendingConfirmation.id == pending_id,
                PendingConfirmation.student_id == student_id,
                PendingConfirmation.state == "pending",
                PendingConfirmation.expires_at > utcnow(),
            )
            .values(state=to, decided_at=utcnow())
        )
        await session.commit()
    return int(getattr(result, "rowcount", 0) or 0) == 1


async def settle(sessions: async_sessionmaker[AsyncSession], pending_id: str, state: State) -> None:
    """The end of an applying change: done, failed, or stale (the record moved on)."""
    async with sessions() as session:
        await session.execute(
            update(PendingConfirmation)
            .where(PendingConfirmation.id == pending_id)
            .values(state=state, decided_at=utcnow())
        )
        await session.commit()


async def prune(session: AsyncSession) -> int:
    """Delete changes a day past their expiry: the page then says the link is unknown."""
    cutoff = utcnow() - timedelta(days=1)
    result = await session.execute(delete(PendingConfirmation).where(PendingConfirmation.expires_at < cutoff))
    await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


def ask_on_page(tool: str, plan: PlannedChange, url: str) -> str:
    """What the model reads: nothing changed, the question, the link, and how to see the outcome."""
    minutes = PAGE_TTL_SECONDS // 60
    return (
        f"Nothing was changed yet: {tool} needs the student's own confirmation on the campus's page. Show the "
        "student this question and the link exactly as written:\n\n"
        f"{plan.message}\n\n"
        f"Confirm or cancel it here (signed in to the campus): {url}\n\n"
        f"The change is made only when the student presses Confirm on that page; the link works once, for "
        f"{minutes} minutes. Do not call {tool} again for this change: each call asks anew. To see whether it "
        "was made, read the current values again after the student says they confirmed."
    )


def asked_by_url(tool: str, url: str) -> str:
    """What the model reads after the client showed the page through URL-mode elicitation."""
    return (
        f"Nothing was changed yet: the student was sent to the campus's confirmation page ({url}). The change "
        f"is made only when they press Confirm there. Do not call {tool} again for this change: each call asks "
        "anew. To see whether it was made, read the current values again after the student says they confirmed."
    )


def url_message(plan: PlannedChange) -> str:
    """What a client shows beside the link it opens (URL-mode elicitation)."""
    return f"Confirm or cancel this change on the campus's page, signed in as yourself:\n\n{plan.message}"
