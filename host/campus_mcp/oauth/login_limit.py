"""The per-address sign-in limit, safe under parallel attempts.

Counting the failures first and recording one after the password check (which takes a good
fraction of a second) let every attempt of a parallel burst pass the count. Here an attempt is
recorded *before* it is counted, and committed before the count: of any number of parallel
attempts, each counts every attempt committed before it, so at most ``limit`` of them see a count
within the limit and reach the password check. This needs no lock and no isolation level beyond
read committed, so it holds on SQLite and PostgreSQL, and across web workers.

An attempt that turns out right, or that the limit refuses, takes its row back: what the window
counts is the failed sign-ins, as before (a refused attempt never checked a password).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.db import utcnow
from campus_mcp.oauth.models import LoginFailure


class LoginLimit:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, limit: int, window_seconds: int) -> None:
        self.sessions = sessions
        self.limit = limit
        self.window = timedelta(seconds=window_seconds)

    async def begin_attempt(self, address: str) -> int | None:
        """Record an attempt from ``address``: its id while the address is within the limit,
        or None (the attempt is refused, and not counted)."""
        now = utcnow()
        async with self.sessions() as session, session.begin():
            attempt = LoginFailure(address=address, at=now)
            session.add(attempt)
            # Keep the table small: what is outside every window counts for nothing.
            await session.execute(delete(LoginFailure).where(LoginFailure.at < now - 2 * self.window))
        async with self.sessions() as session:
            counted = await session.execute(
                select(func.count(LoginFailure.id)).where(
                    LoginFailure.address == address, LoginFailure.at > now - self.window
                )
            )
            within = int(counted.scalar_one()) <= self.limit
        if within:
            return attempt.id
        await self._take_back(attempt.id)
        return None

    async def succeeded(self, attempt_id: int) -> None:
        """The attempt signed in: it is not a failure."""
        await self._take_back(attempt_id)

    async def _take_back(self, attempt_id: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(delete(LoginFailure).where(LoginFailure.id == attempt_id))
