"""Idempotency keys of write tools (seed 003): a retried change is made once.

The host adds an optional ``idempotency_key`` (1 to 200 characters) to the input schema of every
write tool; plugins' input models never see it. The first call that makes the change keeps
(student, tool, key) -> (digest of the other arguments, the answer) for 24 hours. A repeat with
the same key and arguments answers the kept answer and runs nothing (and asks nothing); the same
key with other arguments is refused, saying so. A call that changed nothing (declined,
cancelled, an error) keeps nothing, so the key can be used again for the real change.

The key is reserved (a row with no answer yet) before the change runs, so two calls racing with
one key cannot both make the change: the second is told to wait for the first.

One owner holds at most ``KEYS_PER_OWNER`` keys at a time (issue 30: one student could keep
about 144,000 rows a day); past that a new key is refused in words naming the limit, while a call
without a key, and the repeat of a kept key, still work.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, Integer, String, UniqueConstraint, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.base.db import Base, UTCDateTime, utcnow
from campus_mcp.plugin.errors import InvalidInput
from campus_mcp.plugin.principal import Principal

FIELD = "idempotency_key"
KEY_LIMIT = 200
KEY_LIFETIME = timedelta(hours=24)
# Far more changes than a student makes in a day (each key is one change), far fewer rows than abuse.
KEYS_PER_OWNER = 1000

SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": KEY_LIMIT,
    "description": (
        # Repeated in every write tool's schema: short. The README's write-tool section says the rest.
        "Optional UUID you make up: a retry with the same key and arguments changes nothing."
    ),
}


class IdempotencyKey(Base):
    __tablename__ = "idempotency_keys"
    __table_args__ = (UniqueConstraint("owner", "tool", "key", name="uq_idempotency_keys_owner"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(100))
    key: Mapped[str] = mapped_column(String(200))
    arguments_digest: Mapped[str] = mapped_column(String(64))
    # None while the change runs (the key is reserved).
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


def student_owner(student_id: int) -> str:
    """The owner of a student's keys (also what the student's export reads them by)."""
    return f"student:{student_id}"


def owner_of(principal: Principal) -> str:
    """Whose keys these are: a student's keys are theirs whatever app they use."""
    if principal.user_id is not None:
        return student_owner(principal.user_id)
    return f"client:{principal.client_id or 'anonymous'}"


def split_key(arguments: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The idempotency key of a call and the tool's own arguments, or InvalidInput for a bad key."""
    rest = dict(arguments)
    if FIELD not in rest:
        return None, rest
    key = rest.pop(FIELD)
    if key is None:
        return None, rest
    if not isinstance(key, str) or not key.strip() or len(key) > KEY_LIMIT:
        raise InvalidInput(
            f"{FIELD} must be a string of 1 to {KEY_LIMIT} characters (e.g. a UUID made for this change); "
            "leave it out if you do not need one."
        )
    return key, rest


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class KeyInUse(InvalidInput):
    """The key was used with other arguments, or its first call is still running."""


class TooManyKeys(InvalidInput):
    """The owner holds KEYS_PER_OWNER keys already; a new one is refused."""


def _other_arguments(tool: str) -> KeyInUse:
    return KeyInUse(
        f"This {FIELD} was already used for a different call of {tool} (other arguments), so nothing was "
        f"changed. Use a new {FIELD} for a new change, or repeat the first call's arguments exactly."
    )


def _still_running(tool: str) -> KeyInUse:
    return KeyInUse(
        f"A call of {tool} with this {FIELD} is still running. Wait a moment and call again with the same "
        "key and arguments to get its answer."
    )


async def _find(session: AsyncSession, owner: str, tool: str, key: str) -> IdempotencyKey | None:
    found: IdempotencyKey | None = await session.scalar(
        select(IdempotencyKey).where(
            IdempotencyKey.owner == owner,
            IdempotencyKey.tool == tool,
            IdempotencyKey.key == key,
            IdempotencyKey.created_at > utcnow() - KEY_LIFETIME,
        )
    )
    return found


async def _keys_held(session: AsyncSession, owner: str) -> int:
    held = await session.scalar(
        select(func.count())
        .select_from(IdempotencyKey)
        .where(IdempotencyKey.owner == owner, IdempotencyKey.created_at > utcnow() - KEY_LIFETIME)
    )
    return int(held or 0)


def _too_many_keys() -> TooManyKeys:
    return TooManyKeys(
        f"You hold {KEYS_PER_OWNER:,} {FIELD}s from the last 24 hours, the most one student may hold, so "
        f"nothing was changed. Call again without {FIELD} (the change is then made once per call), or wait "
        "until older keys are forgotten (24 hours after each was used)."
    )


def _answer_of(row: IdempotencyKey, tool: str, digest: str) -> dict[str, Any]:
    if row.arguments_digest != digest:
        raise _other_arguments(tool)
    if row.result is None:
        raise _still_running(tool)
    return dict(row.result)


async def kept_answer(
    sessions: async_sessionmaker[AsyncSession], owner: str, tool: str, key: str, digest: str
) -> dict[str, Any] | None:
    """The answer kept for this key, None for a new key; KeyInUse for other arguments."""
    async with sessions() as session:
        row = await _find(session, owner, tool, key)
        # A new key past the limit is refused before the student is asked anything.
        if row is None and await _keys_held(session, owner) >= KEYS_PER_OWNER:
            raise _too_many_keys()
    return None if row is None else _answer_of(row, tool, digest)


async def reserve(
    sessions: async_sessionmaker[AsyncSession], owner: str, tool: str, key: str, digest: str
) -> dict[str, Any] | None:
    """Take the key for a change about to run (None), or the answer a call that won the race kept."""
    async with sessions() as session:
        # Keys older than a day are forgotten; the cleanup rides on the writes.
        await session.execute(delete(IdempotencyKey).where(IdempotencyKey.created_at <= utcnow() - KEY_LIFETIME))
        if await _keys_held(session, owner) >= KEYS_PER_OWNER:
            await session.commit()  # the cleanup above stays done
            raise _too_many_keys()
        session.add(
            IdempotencyKey(owner=owner, tool=tool, key=key, arguments_digest=digest, result=None, created_at=utcnow())
        )
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
        else:
            return None
        row = await _find(session, owner, tool, key)
    if row is None:  # taken and released meanwhile: the caller may simply try again
        raise _still_running(tool)
    return _answer_of(row, tool, digest)


async def keep(
    sessions: async_sessionmaker[AsyncSession], owner: str, tool: str, key: str, result: Mapping[str, Any]
) -> None:
    async with sessions() as session:
        row = await _find(session, owner, tool, key)
        if row is not None:
            row.result = dict(result)
            await session.commit()


async def release(sessions: async_sessionmaker[AsyncSession], owner: str, tool: str, key: str) -> None:
    """Give the key back: the call changed nothing, so the key may be used for the change."""
    async with sessions() as session:
        await session.execute(
            delete(IdempotencyKey).where(
                IdempotencyKey.owner == owner, IdempotencyKey.tool == tool, IdempotencyKey.key == key
            )
        )
        await session.commit()
