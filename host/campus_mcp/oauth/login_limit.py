"""The sign-in limits: one per account, one per address, so they lock out an attacker, not a campus.

One address can be a whole campus behind a NAT (or a proxy), so the address alone must not decide
who may sign in: ten wrong passwords from one student used to lock out every student there.

- **Per account** (``login_max_failures`` in ``login_window_seconds``, from any address): beyond
  it the account is locked, its password is not checked, and guessing one student's password is
  stopped whatever addresses the guesses come from. Unknown usernames count too, so a guess at a
  name costs the same as a guess at a password.
- **Per address**, with a threshold a NAT does not reach by honest typos
  (``login_address_max_failures``). Beyond it the address is in its *soft phase*: the password is
  still checked, a right one for an account that is not locked signs in, and a wrong one is
  answered only after :data:`SOFT_PHASE_DELAY_SECONDS` (a slowdown that needs no captcha). Beyond
  :data:`HARD_PHASE_FACTOR` times the threshold every attempt from the address is refused: that
  many failures in one window is an attack, not a campus.

An admin clears either lock at once: ``campus-mcp students unlock USER`` or ``--address ADDR``.

Parallel attempts: an attempt is recorded *before* it is counted, and committed before the count,
so of any number of parallel attempts each counts every attempt committed before it, and at most
``limit`` of them see a count within the limit. This needs no lock and no isolation level beyond
read committed, so it holds on SQLite and PostgreSQL, and across web workers. An attempt that
turns out right, or that a limit refuses, takes its row back: what the windows count is failed
sign-ins (a refused attempt never checked a password).
"""

from __future__ import annotations

import dataclasses
import enum
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.addresses import address_key
from campus_mcp.base.db import utcnow
from campus_mcp.oauth.models import LoginFailure

# The soft phase's slowdown of a wrong password: a guesser at one address gets far fewer guesses a
# minute, a student who mistyped waits two seconds.
SOFT_PHASE_DELAY_SECONDS = 2.0
# How far past its threshold an address may go, slowed, before every attempt from it is refused.
HARD_PHASE_FACTOR = 10


def account_key(username: str) -> str:
    """How accounts are looked up (``accounts.student_by_username``), so ``Grace`` is ``grace``."""
    return username.strip().lower()[:150]


class Verdict(enum.Enum):
    CHECK = "check"  # check the password
    SLOWED = "slowed"  # check it; a wrong one is answered after the soft phase's delay
    ACCOUNT_LOCKED = "account locked"
    ADDRESS_BLOCKED = "address blocked"


@dataclasses.dataclass(frozen=True)
class Attempt:
    id: int
    verdict: Verdict

    @property
    def checked(self) -> bool:
        return self.verdict in (Verdict.CHECK, Verdict.SLOWED)


class LoginLimit:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        account_limit: int,
        address_limit: int,
        window_seconds: int,
    ) -> None:
        self.sessions = sessions
        self.account_limit = account_limit
        self.address_limit = address_limit
        self.window = timedelta(seconds=window_seconds)

    async def begin_attempt(self, address: str, username: str) -> Attempt:
        """Record an attempt from ``address`` at ``username`` and say whether its password may be
        checked. A refused attempt is taken back at once (it is not a failure)."""
        now = utcnow()
        address, account = address_key(address), account_key(username)
        async with self.sessions() as session, session.begin():
            attempt = LoginFailure(address=address, username=account, at=now)
            session.add(attempt)
            # Keep the table small: what is outside every window counts for nothing.
            await session.execute(delete(LoginFailure).where(LoginFailure.at < now - 2 * self.window))
        since = now - self.window
        async with self.sessions() as session:
            by_account = await self._count(session, LoginFailure.username == account, since)
            by_address = await self._count(session, LoginFailure.address == address, since)
        if by_account > self.account_limit:
            verdict = Verdict.ACCOUNT_LOCKED
        elif by_address > self.address_limit * HARD_PHASE_FACTOR:
            verdict = Verdict.ADDRESS_BLOCKED
        elif by_address > self.address_limit:
            verdict = Verdict.SLOWED
        else:
            verdict = Verdict.CHECK
        found = Attempt(attempt.id, verdict)
        if not found.checked:
            await self._take_back(attempt.id)
        return found

    async def succeeded(self, attempt: Attempt) -> None:
        """The attempt signed in: it is not a failure."""
        await self._take_back(attempt.id)

    async def unlock_account(self, username: str) -> int:
        """Forget the failures at ``username`` (an admin's unlock); how many there were."""
        return await self._forget(LoginFailure.username == account_key(username))

    async def unlock_address(self, address: str) -> int:
        """Forget the failures from ``address`` (its IPv6 /64, as counted); how many there were."""
        return await self._forget(LoginFailure.address == address_key(address))

    @staticmethod
    async def _count(session: AsyncSession, where: ColumnElement[bool], since: datetime) -> int:
        counted = await session.execute(select(func.count(LoginFailure.id)).where(where, LoginFailure.at > since))
        return int(counted.scalar_one())

    async def _forget(self, where: ColumnElement[bool]) -> int:
        async with self.sessions() as session, session.begin():
            removed = await session.execute(delete(LoginFailure).where(where))
        return int(removed.rowcount)  # type: ignore[attr-defined]

    async def _take_back(self, attempt_id: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(delete(LoginFailure).where(LoginFailure.id == attempt_id))
