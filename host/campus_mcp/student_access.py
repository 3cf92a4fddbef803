"""The access log of student data: which app read or changed which student's data, when, by which
door, and how it ended (issue 28, point 2). The student reads it on Recent activity, the privacy
office with ``campus-mcp audit``.

Invariants, each held by a test (tests/test_student_access.py):

- One rule says what is recorded (:func:`touches_student_data`): a call by an app (an OAuth client,
  a personal access token, the calendar feed) to a tool or route whose permission is not one of the
  always-on public ones (the catalog is not a student's data). The student's own dashboard session
  is the student, not an app, and is not recorded.
- A row holds when, the student, the app (kind, id and the name it had then), the door (the MCP
  endpoint, ``stdio``, the REST route, the feed), the tool and the outcome: never the arguments or
  the answer.
- Recording never waits for the database, and an answer that reached its client has its entry on
  disk (issue 35, point 16): :meth:`AccessLog.record` appends the entry to this process's journal
  (campus_mcp.access_journal: a local file, one ``os.write``, no fsync) before the caller answers,
  and a task of the process writes what the journal holds into the database about once a second,
  in one statement with the journal's new offset (and at shutdown, :meth:`AccessLog.close`). A
  process killed before that leaves its journal, which the next process to start on the machine
  writes (:meth:`AccessLog.replay_stopped`): every entry exactly once. A reader of the log (the
  student's page, the export) writes what is pending first, and waits for a write under way, so it
  sees its own process's latest calls.
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
from pathlib import Path
from typing import Literal

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.access_journal import ROTATE_BYTES, Journal, JournalEntry, journal_folder, stopped_journals
from campus_mcp.accounts import Student
from campus_mcp.contributions import Cron, Job, JobOutcome
from campus_mcp.db import Base, UTCDateTime, utcnow
from campus_mcp.job_context import JobContext
from campus_mcp.oauth.models import OAuthClient
from campus_mcp.oauth.personal_tokens import CLIENT_PREFIX, PersonalToken
from campus_mcp.principal import Principal

log = logging.getLogger(__name__)

AppKind = Literal["oauth", "token", "feed"]
FEED_APP_NAME = "calendar feed"
PRUNE_JOB_ID = "core.student_access_prune"
# Entries waiting for the writer beyond this are dropped with a warning (a database down for long
# must not grow the process without bound); at a few hundred calls a second, minutes of calls.
MAX_PENDING = 100_000
WRITE_EVERY_SECONDS = 1.0
# The journals of stopped processes wait while the database does not answer at a start; tried again.
REPLAY_RETRY_SECONDS = 10.0


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


class AccessJournalState(Base):
    """How far one process's journal (campus_mcp.access_journal) is in ``student_access``: written in
    the transaction that inserts its entries, so a replay starts exactly where the process stopped."""

    __tablename__ = "student_access_journals"

    # The journal file's name: host, pid and a random part.
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    # The byte offset up to which its entries are in student_access.
    drained: Mapped[int] = mapped_column(BigInteger)
    at: Mapped[datetime] = mapped_column(UTCDateTime())


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
    """The process's writer of the access log (see the module's invariants), its entries journaled
    in ``journal_folder`` (campus_mcp.access_journal; None: in memory only, lost with the process)."""

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], journal_folder: Path | None, *, enabled: bool = True
    ) -> None:
        self.sessions = sessions
        self.enabled = enabled
        self.folder = journal_folder
        # This process's journal, made at its first entry; the one before the last rotation, until drained.
        self._journal: Journal | None = None
        self._retired: Journal | None = None
        # Entries no journal took (none configured, or the disk refused them): written as they are.
        self._memory: list[JournalEntry] = []
        self._writer: asyncio.Task[None] | None = None
        self._replayer: asyncio.Task[None] | None = None
        self._names: dict[tuple[str, str], str] = {}
        # One batch at a time: a reader's write_pending waits for the writer task's batch under
        # way (read from the journal, not yet committed), which it would otherwise miss.
        self._writing = asyncio.Lock()

    def start(self) -> None:
        """Put the entries of this machine's stopped processes in the database (their journals), in
        a task of its own: the start of the server never waits for the database for it."""
        if self.folder is not None and self.folder.is_dir():
            with contextlib.suppress(RuntimeError):  # no running loop: the next process's start does it
                self._replayer = asyncio.get_running_loop().create_task(self._replay_until_done())

    def record_call(self, principal: Principal, *, door: str, action: str, outcome: str) -> None:
        """A call by an app for its student (the caller checked :func:`touches_student_data`)."""
        app = app_of(principal)
        if app is None or principal.user_id is None:
            return
        self.record(principal.user_id, app_kind=app[0], app_id=app[1], door=door, action=action, outcome=outcome)

    def record(self, student_id: int, *, app_kind: AppKind, app_id: str, door: str, action: str, outcome: str) -> None:
        """Journal one entry before the caller answers; it reaches the database within about a second,
        off the answer's path. On the event loop's thread, as every door calls it."""
        if not self.enabled:
            return
        entry = JournalEntry.now(student_id, app_kind, app_id, door, action, outcome)
        if not self._journaled(entry):
            if len(self._memory) >= MAX_PENDING:
                log.warning("the access log is %d entries behind the database; this entry is dropped", MAX_PENDING)
                return
            self._memory.append(entry)
        if self._writer is None or self._writer.done():
            with contextlib.suppress(RuntimeError):  # no running loop: close() or a reader writes it
                self._writer = asyncio.get_running_loop().create_task(self._write_soon())

    def _journaled(self, entry: JournalEntry) -> bool:
        if self.folder is None:
            return False
        try:
            if self._journal is None:
                self._journal = Journal.create(self.folder)
            self._journal.append(entry)
        except OSError as error:
            # The answer goes out all the same (a full disk must not stop every student's app):
            # the entry waits in memory, as every entry did before the journal, and is lost if the
            # process is killed before the writer's next batch. Said loudly, once a minute.
            log.error(
                "the access log's journal in %s cannot be written (%s): entries wait in memory only until written",
                self.folder,
                error.strerror or error,
            )
            return False
        return True

    def _behind(self) -> bool:
        """Whether any entry of this process waits for the database."""
        journal = self._journal
        return (
            bool(self._memory)
            or self._retired is not None
            or (journal is not None and journal.size() > journal.drained)
        )

    async def _write_soon(self) -> None:
        while self._behind():
            await asyncio.sleep(WRITE_EVERY_SECONDS)
            try:
                await self.write_pending()
            except Exception:
                log.warning("the access log could not be written; its entries wait in its journal", exc_info=True)
                self._sync()

    def _sync(self) -> None:
        """The journals on the disk itself while their entries wait for the database (a machine
        crash meanwhile keeps them; campus_mcp.access_journal, durability)."""
        for journal in (self._journal, self._retired):
            if journal is not None:
                with contextlib.suppress(OSError):
                    journal.sync()

    async def write_pending(self) -> int:
        """Write every entry recorded so far; how many. Batches take turns, so a reader's call
        returns only once every entry recorded before it is committed, and none is written twice."""
        async with self._writing:
            return await self._write_all()

    async def _write_all(self) -> int:
        written = 0
        if self._memory:
            batch, self._memory = self._memory, []
            try:
                written += await self._insert(batch, None)
            except Exception:
                self._memory[:0] = batch[: MAX_PENDING - len(self._memory)]
                raise
        journal = self._journal
        if journal is not None and self._retired is None and journal.size() >= ROTATE_BYTES:
            # A new file from the next entry on; this one is drained to its end and deleted.
            self._retired, self._journal = journal, None
        if self._retired is not None:
            written += await self._drain(self._retired, self._retired.size())
            await self._remove(self._retired)
            self._retired = None
        if self._journal is not None:
            written += await self._drain(self._journal, self._journal.size())
        return written

    async def _drain(self, journal: Journal, end: int) -> int:
        """Put ``journal``'s entries up to ``end`` in the database, a read at a time, each with the
        file's new offset in the same transaction."""
        written = 0
        while journal.drained < end:
            found, after, torn = journal.read(journal.drained, end)
            if after == journal.drained:
                break  # a last line not yet whole
            if torn:
                log.warning("the access log's journal %s has %d lines that cannot be read; skipped", journal.name, torn)
            written += await self._insert(found, (journal.name, after))
            journal.drained = after
        return written

    async def _insert(self, batch: list[JournalEntry], drained: tuple[str, int] | None) -> int:
        """Insert ``batch``, and record how far its journal is drained in the same transaction."""
        async with self.sessions() as session:
            batch = await self._of_current_students(session, batch)
            if batch:
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
            if drained is not None:
                name, offset = drained
                moved = await session.execute(
                    update(AccessJournalState)
                    .where(AccessJournalState.name == name)
                    .values(drained=offset, at=utcnow())
                )
                if not getattr(moved, "rowcount", 0):
                    session.add(AccessJournalState(name=name, drained=offset, at=utcnow()))
            await session.commit()
        return len(batch)

    async def _remove(self, journal: Journal) -> None:
        """Delete a drained journal: the file first, then its row (module docstring of access_journal)."""
        journal.remove()
        async with self.sessions() as session:
            await session.execute(delete(AccessJournalState).where(AccessJournalState.name == journal.name))
            await session.commit()

    async def _replay_until_done(self) -> None:
        while True:
            try:
                replayed = await self.replay_stopped()
            except Exception:
                log.warning("the journals of stopped processes could not be written yet; trying again", exc_info=True)
                await asyncio.sleep(REPLAY_RETRY_SECONDS)
                continue
            if replayed:
                log.info("the access log took %d entries from the journals of stopped processes", replayed)
            return

    async def replay_stopped(self) -> int:
        """Put the entries of this machine's stopped processes in the database and delete their
        journals; how many entries. Any number of processes may do it at once (each file is locked
        by the one replaying it)."""
        if self.folder is None:
            return 0
        own = None if self._journal is None else self._journal.name
        replayed = 0
        for journal in stopped_journals(self.folder, own):
            try:
                async with self.sessions() as session:
                    journal.drained = (
                        await session.scalar(
                            select(AccessJournalState.drained).where(AccessJournalState.name == journal.name)
                        )
                    ) or 0
                end = journal.size()
                replayed += await self._drain(journal, end)
                if journal.drained < end:
                    log.warning("the journal %s ends in a torn line (a machine crash); skipped", journal.name)
                await self._remove(journal)
            finally:
                journal.close()
        return replayed

    async def _of_current_students(self, session: AsyncSession, batch: list[JournalEntry]) -> list[JournalEntry]:
        """``batch`` less the entries of students removed since they were queued (an account an
        operator deleted): the insert of one such entry would fail the whole statement on the
        foreign key, and the writer would try it again every second for ever."""
        wanted = {entry.student_id for entry in batch}
        if not wanted:
            return batch
        present = set((await session.scalars(select(Student.id).where(Student.id.in_(wanted)))).all())
        if present == wanted:
            return batch
        kept = [entry for entry in batch if entry.student_id in present]
        log.info(
            "the access log dropped %d entries of %d removed students", len(batch) - len(kept), len(wanted - present)
        )
        return kept

    async def _app_names(self, session: AsyncSession, batch: list[JournalEntry]) -> dict[tuple[str, str], str]:
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
        """Write what is pending and delete this process's journal (the process is stopping); what
        cannot be written stays in the journal for the next process on this machine."""
        for task in (self._writer, self._replayer):
            if task is None or task.done():
                continue
            if task.get_loop() is asyncio.get_running_loop():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            else:  # a test's app runs on a loop of its own beside the test's: cancel it there
                with contextlib.suppress(RuntimeError):  # that loop is closed: nothing runs it
                    task.get_loop().call_soon_threadsafe(task.cancel)
        self._writer = self._replayer = None
        try:
            # Not write_pending: a writer cancelled on another loop, closed since, never gives the
            # turn back (and an asyncio lock is not to be waited on from two loops).
            await self._write_all()
            journal = self._journal
            if journal is not None and journal.size() == journal.drained:  # nothing came in meanwhile
                await self._remove(journal)
        except Exception:
            waiting = [j.path for j in (self._retired, self._journal) if j is not None]
            log.warning(
                "the access log could not be written at shutdown: %d entries in memory are lost, the "
                "journal's (%s) are written by the next process that starts on this machine",
                len(self._memory),
                ", ".join(map(str, waiting)) or "none",
                exc_info=True,
            )
        finally:
            for journal in (self._retired, self._journal):
                if journal is not None:
                    journal.close()
            self._journal = self._retired = None


async def replay_stopped_journals(sessions: async_sessionmaker[AsyncSession], var_dir: str, database_url: str) -> int:
    """For a command that reads the log (``audit``, ``export``): the entries that this machine's
    killed processes left in their journals, into the database first; how many."""
    return await AccessLog(sessions, journal_folder(var_dir, database_url)).replay_stopped()


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
