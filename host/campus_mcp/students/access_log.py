"""The access log of student data: which app read or changed which student's data, when, by which
door, and how it ended (issue 28, point 2). The student reads it on Recent activity, the privacy
office with ``campus-mcp audit``.

Invariants, each held by a test (tests/students/test_student_access.py):

- One rule says what is recorded (:func:`touches_student_data`): a call by an app (an OAuth client,
  a personal access token, the calendar feed) to a tool or route whose permission is not one of the
  always-on public ones (the catalog is not a student's data). The student's own dashboard session
  is the student, not an app, and is not recorded.
- A row holds when, the student, the app (kind, id and the name it had then), the door (the MCP
  endpoint, ``stdio``, the REST route, the feed), the tool and the outcome: never the arguments or
  the answer.
- Recording never waits for the database: :meth:`AccessLog.record` appends to a list in memory,
  and a task of the process writes the list in one statement about once a second (and at shutdown,
  :meth:`AccessLog.close`). A reader of the log (the student's page, the export) writes what is
  pending first, and waits for a write under way, so it sees its own process's latest calls.
- Rows older than ``student_access_days`` are deleted by the job ``core.student_access_prune``.
- An entry whose student was removed while it waited is dropped, as the student's rows are
  (``ON DELETE CASCADE``): the writer never retries an entry the database can never take.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import ForeignKey, Index, Integer, String, delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.assembly.deployment import AppKind
from campus_mcp.base.db import Base, UTCDateTime, utcnow
from campus_mcp.oauth.accounts import Student
from campus_mcp.oauth.models import OAuthClient
from campus_mcp.oauth.personal_tokens import CLIENT_PREFIX, PersonalToken
from campus_mcp.plugin.job_context import Cron, Job, JobContext, JobOutcome
from campus_mcp.plugin.principal import Principal

log = logging.getLogger(__name__)

FEED_APP_NAME = "calendar feed"
PRUNE_JOB_ID = "core.student_access_prune"
# Entries waiting for the writer beyond this are dropped with a warning (a database down for long
# must not grow the process without bound); at a few hundred calls a second, minutes of calls.
MAX_PENDING = 100_000
WRITE_EVERY_SECONDS = 1.0


class StudentAccess(Base):
    __tablename__ = "student_access"
    __table_args__ = (Index("ix_student_access_student_at", "student_id", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    student_id: Mapped[int] = mapped_column(Integer, ForeignKey("students.id", ondelete="CASCADE"))
    # oauth | token | feed
    app_kind: Mapped[str] = mapped_column(String(10))
    # The OAuth client id, the token's public id, or "calendar-feed".
    app_id: Mapped[str] = mapped_column(String(2000), index=True)
    # The app's name when it called (a client may re-register under another name later).
    app_name: Mapped[str] = mapped_column(String(300))
    # Where it came in: /api/mcp, /api/mcp/toolboxes, /api/mcp/<family>, stdio, GET /api/v1/..., the feed.
    door: Mapped[str] = mapped_column(String(300))
    # The tool (MCP) or operation (REST) name, or "calendar_feed".
    action: Mapped[str] = mapped_column(String(200))
    outcome: Mapped[str] = mapped_column(String(30))


@dataclasses.dataclass(frozen=True)
class AccessEntry:
    """One read or change as recorded (a row of :class:`StudentAccess`)."""

    at: datetime
    student_id: int
    app_kind: str
    app_id: str
    app_name: str
    door: str
    action: str
    outcome: str

    def as_dict(self) -> dict[str, str | int]:
        return {
            "at": self.at.isoformat(),
            "student_id": self.student_id,
            "app_kind": self.app_kind,
            "app_id": self.app_id,
            "app_name": self.app_name,
            "door": self.door,
            "action": self.action,
            "outcome": self.outcome,
        }


@dataclasses.dataclass(frozen=True)
class _Pending:
    at: datetime
    student_id: int
    app_kind: AppKind
    app_id: str
    door: str
    action: str
    outcome: str


def app_of(principal: Principal) -> tuple[AppKind, str] | None:
    """The app a principal acts through, or None for a caller that is not an app acting for a
    student (anonymous, or the student on the dashboard, whose session has no client)."""
    if principal.user_id is None or principal.client_id is None:
        return None
    if principal.personal_token:
        return "token", principal.client_id.removeprefix(CLIENT_PREFIX)
    return "oauth", principal.client_id


def touches_student_data(principal: Principal, scope: str, public_scopes: Iterable[str]) -> bool:
    """Whether a call by ``principal`` to a tool of permission ``scope`` is recorded: an app acting
    for a student, with a permission that is not always on (the module's first invariant)."""
    return app_of(principal) is not None and scope not in public_scopes


class AccessLog:
    """The process's writer of the access log (see the module's invariants)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, enabled: bool = True) -> None:
        self.sessions = sessions
        self.enabled = enabled
        self._pending: list[_Pending] = []
        self._writer: asyncio.Task[None] | None = None
        self._names: dict[tuple[str, str], str] = {}
        # One batch at a time: a reader's write_pending waits for the writer task's batch under
        # way (taken from the queue, not yet committed), which it would otherwise miss.
        self._writing = asyncio.Lock()

    def record_call(self, principal: Principal, *, door: str, action: str, outcome: str) -> None:
        """A call by an app for its student (the caller checked :func:`touches_student_data`)."""
        app = app_of(principal)
        if app is None or principal.user_id is None:
            return
        self.record(principal.user_id, app_kind=app[0], app_id=app[1], door=door, action=action, outcome=outcome)

    def record(self, student_id: int, *, app_kind: AppKind, app_id: str, door: str, action: str, outcome: str) -> None:
        """Queue one entry; it is written within about a second, off the answer's path."""
        if not self.enabled:
            return
        if len(self._pending) >= MAX_PENDING:
            log.warning("the access log is %d entries behind the database; this entry is dropped", MAX_PENDING)
            return
        self._pending.append(_Pending(utcnow(), student_id, app_kind, app_id, door, action, outcome))
        if self._writer is None or self._writer.done():
            with contextlib.suppress(RuntimeError):  # no running loop: close() or a reader writes it
                self._writer = asyncio.get_running_loop().create_task(self._write_soon())

    async def _write_soon(self) -> None:
        while self._pending:
            await asyncio.sleep(WRITE_EVERY_SECONDS)
            try:
                await self.write_pending()
            except Exception:
                log.warning("the access log could not be written; %d entries wait", len(self._pending), exc_info=True)

    async def write_pending(self) -> int:
        """Write every queued entry in one statement; how many. Batches take turns, so a reader's
        call returns only once every entry queued before it is committed, and none is written twice."""
        async with self._writing:
            return await self._write_batch()

    async def _write_batch(self) -> int:
        batch, self._pending = self._pending, []
        if not batch:
            return 0
        try:
            async with self.sessions() as session:
                batch = await self._of_current_students(session, batch)
                if not batch:
                    return 0
                names = await self._app_names(session, batch)
                await session.execute(
                    insert(StudentAccess),
                    [
                        {
                            "at": entry.at,
                            "student_id": entry.student_id,
                            "app_kind": entry.app_kind,
                            "app_id": entry.app_id,
                            "app_name": names.get((entry.app_kind, entry.app_id), entry.app_id),
                            "door": entry.door,
                            "action": entry.action,
                            "outcome": entry.outcome,
                        }
                        for entry in batch
                    ],
                )
                await session.commit()
        except Exception:
            self._pending[:0] = batch[: MAX_PENDING - len(self._pending)]
            raise
        return len(batch)

    async def _of_current_students(self, session: AsyncSession, batch: list[_Pending]) -> list[_Pending]:
        """``batch`` less the entries of students removed since they were queued (an account an
        operator deleted): the insert of one such entry would fail the whole statement on the
        foreign key, and the writer would try it again every second for ever."""
        wanted = {entry.student_id for entry in batch}
        present = set((await session.scalars(select(Student.id).where(Student.id.in_(wanted)))).all())
        if present == wanted:
            return batch
        kept = [entry for entry in batch if entry.student_id in present]
        log.info(
            "the access log dropped %d entries of %d removed students", len(batch) - len(kept), len(wanted - present)
        )
        return kept

    async def _app_names(self, session: AsyncSession, batch: list[_Pending]) -> dict[tuple[str, str], str]:
        """The name of each app in ``batch``: the OAuth client's, the token's, "calendar feed"."""
        wanted = {(entry.app_kind, entry.app_id) for entry in batch} - self._names.keys()
        clients = [app_id for kind, app_id in wanted if kind == "oauth"]
        tokens = [app_id for kind, app_id in wanted if kind == "token"]
        if clients:
            rows = await session.execute(
                select(OAuthClient.client_id, OAuthClient.client_name).where(OAuthClient.client_id.in_(clients))
            )
            self._names.update({("oauth", client_id): name for client_id, name in rows})
        if tokens:
            rows = await session.execute(
                select(PersonalToken.public_id, PersonalToken.name).where(PersonalToken.public_id.in_(tokens))
            )
            self._names.update({("token", public_id): name for public_id, name in rows})
        for kind, app_id in wanted:
            if kind == "feed":
                self._names[(kind, app_id)] = FEED_APP_NAME
        if len(self._names) > 10_000:  # names change rarely; a bounded memory, refilled on demand
            self._names.clear()
        return {key: self._names.get(key, key[1]) for key in {(e.app_kind, e.app_id) for e in batch}}

    async def close(self) -> None:
        """Write what is pending (the process is stopping)."""
        writer, self._writer = self._writer, None
        if writer is not None and not writer.done():
            if writer.get_loop() is asyncio.get_running_loop():
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await writer
            else:  # a test's app runs on a loop of its own beside the test's: cancel it there
                with contextlib.suppress(RuntimeError):  # that loop is closed: nothing runs it
                    writer.get_loop().call_soon_threadsafe(writer.cancel)
        try:
            # Not write_pending: a writer cancelled on another loop, closed since, never gives the
            # turn back (and an asyncio lock is not to be waited on from two loops).
            await self._write_batch()
        except Exception:
            log.warning("the access log lost %d entries at shutdown", len(self._pending), exc_info=True)


# Reading ---------------------------------------------------------------------------------------


def _entry(row: StudentAccess) -> AccessEntry:
    return AccessEntry(
        at=row.at,
        student_id=row.student_id,
        app_kind=row.app_kind,
        app_id=row.app_id,
        app_name=row.app_name,
        door=row.door,
        action=row.action,
        outcome=row.outcome,
    )


async def entries(
    session: AsyncSession,
    *,
    student_id: int | None = None,
    app: str | None = None,
    since: datetime | None = None,
    limit: int | None = None,
) -> list[AccessEntry]:
    """The entries of one student or one app (its id or name), newest first."""
    query = select(StudentAccess).order_by(StudentAccess.at.desc(), StudentAccess.id.desc())
    if student_id is not None:
        query = query.where(StudentAccess.student_id == student_id)
    if app is not None:
        query = query.where((StudentAccess.app_id == app) | (StudentAccess.app_name == app))
    if since is not None:
        query = query.where(StudentAccess.at >= since)
    if limit is not None:
        query = query.limit(limit)
    return [_entry(row) for row in (await session.scalars(query))]


async def last_reads(session: AsyncSession, student_id: int) -> dict[tuple[str, str], datetime]:
    """When each app last read or changed the student's data, by (kind, app id)."""
    rows = await session.execute(
        select(StudentAccess.app_kind, StudentAccess.app_id, func.max(StudentAccess.at))
        .where(StudentAccess.student_id == student_id)
        .group_by(StudentAccess.app_kind, StudentAccess.app_id)
    )
    return {(kind, app_id): at for kind, app_id, at in rows}


# Keeping ---------------------------------------------------------------------------------------


async def prune(session: AsyncSession, days: int) -> int:
    """Delete the entries older than ``days``; how many."""
    result = await session.execute(delete(StudentAccess).where(StudentAccess.at < utcnow() - timedelta(days=days)))
    await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


async def _prune_job(context: JobContext) -> JobOutcome:
    days = context.settings.student_access_days
    async with context.session() as session:
        deleted = await prune(session, days)
    return JobOutcome(items=deleted, summary=f"deleted {deleted} access log entries older than {days} days")


def prune_job() -> Job:
    return Job(
        id=PRUNE_JOB_ID,
        description="Delete the access log entries older than student_access_days.",
        trigger=Cron(minute="41", hour="3"),
        run=_prune_job,
    )
