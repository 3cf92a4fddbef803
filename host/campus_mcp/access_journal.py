"""The access log's write-ahead journal: a small local file per process that holds every entry of
the access log of student data (campus_mcp.student_access) from before its answer is sent until
the batched writer has it in the database (issue 35, point 16). An answer that reached its client
has its entry on disk even when the process is killed (SIGKILL, the OOM killer) before the writer's
next batch; the next process on the machine puts it in the database.

Invariants (tests/test_access_journal.py; through a served campus killed with SIGKILL,
tests/test_student_access_kill.py):

- One file per process, ``VAR_DIR/access-journal/<database>/<host>-<pid>-<random>.jsonl``: one
  JSON array a line, appended by one ``os.write`` to an ``O_APPEND`` descriptor on the event
  loop's thread, before the answer leaves. The folder is per database (a key of its URL, the
  password left out), so a journal is only ever replayed into the database it was written for.
- A process holds an exclusive ``flock`` on its file for its whole life, and the kernel releases
  it when the process ends, however it ends: a file whose lock can be taken is a stopped
  process's. A file is locked under a hidden name and renamed into place, so nobody ever sees one
  of a live process unlocked.
- How far a file is in the database is a row of ``student_access_journals`` (the file's name and
  the byte offset drained), written in the transaction that inserts its entries; so an entry is
  in the database exactly once, at whatever moment a process died.
- A file is deleted only once drained, and before its row (a stop between the two leaves a row of
  a few bytes, never an entry twice or none).

Durability: no fsync per entry. ``os.write`` hands the bytes to the kernel's page cache; from then
on they are the kernel's, not the process's, so a process killed in any way (SIGKILL, the OOM
killer, a crash of the interpreter) cannot lose them, and that is the promise: an answer that
reached its client has its entry. A crash of the machine itself (power, kernel, a VM stopped) loses
what the kernel had not yet written back to the disk; by then the writer has put every entry older
than about a second in the database (whose commit is durable: PostgreSQL's fsync), so such a crash
can lose about the last second of entries, as it loses the connections those answers went out on.
While the database cannot be written, the writer fsyncs the journal after each failed attempt
(once a second), so entries that wait for it survive a machine crash too. An fsync per answer
would cost a disk flush on every answer (docs/privacy.md has the figure), well over the 5% of an
answer's CPU the log may cost, for the one case where the client's connection dies as well.

Several processes on one machine each have their own file in the same folder; any of them, at its
start, replays the files of stopped ones. A process on another machine keeps its journal on that
machine: its entries reach the database when a process starts there again (docs/privacy.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import secrets
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import make_url

SUFFIX = ".jsonl"
# The most one read of a journal takes (the writer's batch): about 6,000 entries.
READ_BYTES = 1 << 20
# A process's file is replaced by a new one once it is this long and drained (or being drained).
ROTATE_BYTES = 1 << 20


def journal_folder(var_dir: str | Path, database_url: str) -> Path:
    """The folder of the journals written for ``database_url``: beside the server's own files, one
    folder per database, named by a key of its URL without the password."""
    url = make_url(database_url).render_as_string(hide_password=True)
    return Path(var_dir) / "access-journal" / hashlib.sha256(url.encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class JournalEntry:
    """One entry as the journal holds it (a row of ``student_access`` less the app's name)."""

    # When, in microseconds since 1970 (UTC): an int from the clock, no datetime made on the
    # answer's path (the line is made before every answer; the datetime when the writer reads it).
    at_us: int
    student_id: int
    app_kind: str
    app_id: str
    door: str
    action: str
    outcome: str

    @classmethod
    def now(cls, student_id: int, app_kind: str, app_id: str, door: str, action: str, outcome: str) -> JournalEntry:
        return cls(time.time_ns() // 1000, student_id, app_kind, app_id, door, action, outcome)

    @property
    def at(self) -> datetime:
        seconds, micro = divmod(self.at_us, 1_000_000)
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=micro)

    def line(self) -> bytes:
        # json's default encoder (C, cached; ASCII only, so a client's name never breaks a line).
        fields = [self.at_us, self.student_id, self.app_kind, self.app_id, self.door, self.action, self.outcome]
        return json.dumps(fields).encode() + b"\n"

    @classmethod
    def of_line(cls, line: bytes) -> JournalEntry:
        at_us, student_id, app_kind, app_id, door, action, outcome = json.loads(line)
        return cls(int(at_us), int(student_id), app_kind, app_id, door, action, outcome)


class Journal:
    """One process's file, open and locked: by its writer (:meth:`create`) or by the process
    that replays it after its writer stopped (:meth:`take`)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd
        # The byte offset up to which the entries are in the database (its row in student_access_journals).
        self.drained = 0

    @property
    def name(self) -> str:
        return self.path.name

    @classmethod
    def create(cls, folder: Path) -> Journal:
        """A new file for this process, locked before anyone can see it."""
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"
        hidden = folder / f".{name}.new"
        fd = os.open(hidden, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(hidden, folder / name)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                hidden.unlink()
            raise
        return cls(folder / name, fd)

    @classmethod
    def take(cls, path: Path) -> Journal | None:
        """``path``'s file, locked for replaying, or None while its process runs (or another
        process replays it, or has deleted it meanwhile)."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # Locked: its writer is gone. Still the file of that name? One that another process
            # replayed and deleted before this lock was taken is not, and is done.
            if os.stat(path).st_ino != os.fstat(fd).st_ino:
                raise FileNotFoundError(path)
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            return None
        return cls(path, fd)

    def append(self, entry: JournalEntry) -> None:
        line = entry.line()
        written = os.write(self.fd, line)
        if written != len(line):  # a full disk mid-line: the reader skips the torn line
            raise OSError(f"the journal took {written} of {len(line)} bytes")

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def read(self, start: int, end: int) -> tuple[list[JournalEntry], int, int]:
        """The whole lines between ``start`` and ``end`` (at most :data:`READ_BYTES`): the entries,
        the offset after the last whole line, and how many lines could not be read (a line torn by
        a machine crash or a full disk); a last line with no newline is left for the next read."""
        data = os.pread(self.fd, min(end - start, READ_BYTES), start)
        whole = data.rfind(b"\n") + 1
        if whole == 0 and len(data) == READ_BYTES:  # one line longer than a read: never an entry
            return [], start + len(data), 1
        found: list[JournalEntry] = []
        torn = 0
        for line in data[:whole].splitlines():
            try:
                found.append(JournalEntry.of_line(line))
            except (ValueError, TypeError):
                torn += 1
        return found, start + whole, torn

    def sync(self) -> None:
        os.fsync(self.fd)

    def close(self) -> None:
        """Close (and unlock) the file, kept on disk for the next process to replay."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def remove(self) -> None:
        """Delete the file (every entry is in the database), then close it."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.close()


def stopped_journals(folder: Path, own: str | None = None) -> Iterator[Journal]:
    """The files in ``folder`` whose processes stopped, each locked by this process as it is yielded
    (the caller replays and removes or closes it); ``own`` (this process's file) is skipped."""
    if not folder.is_dir():
        return
    for path in folder.glob(f".*{SUFFIX}.new"):  # a process stopped between its file's open and rename
        left = Journal.take(path)
        if left is not None:
            left.remove()  # never an entry: they come after the rename
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        if path.name == own:
            continue
        journal = Journal.take(path)
        if journal is not None:
            yield journal
