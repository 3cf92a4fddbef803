"""The access log's journal (campus_mcp.access_journal), its invariants one by one on a test campus's
database; the whole, through a served campus killed with SIGKILL, is test_student_access_kill.py.

- A stopped process's journal is written from where its database row says it stopped: an entry
  already in the database is not written again, one after it is (exactly once).
- A journal whose process still runs (its lock held, here by a child process) is left alone.
- A line torn by a machine crash is skipped with a warning; the lines around it are written.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from campus_mcp.access_journal import Journal, JournalEntry
from campus_mcp.student_access import AccessJournalState, AccessLog, StudentAccess
from campus_mcp.testing import CampusFactory
from sqlalchemy import func, select


def entry(action: str) -> JournalEntry:
    return JournalEntry.now(1, "feed", "calendar-feed", "feed", action, "ok")


async def written(campus: object) -> list[str]:
    async with campus.sessions() as session:  # type: ignore[attr-defined]
        return list(await session.scalars(select(StudentAccess.action).order_by(StudentAccess.id)))


async def test_a_stopped_journal_is_written_once_from_where_it_stopped(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    campus = await campus_factory(demo=True)
    folder = tmp_path / "journal"
    # A process journals two entries and writes them, then a third, and dies before writing it
    # (its file is closed, never removed: what SIGKILL leaves).
    dead = AccessLog(campus.sessions, folder)
    for action in ("first", "second"):
        dead.record(1, app_kind="feed", app_id="calendar-feed", door="feed", action=action, outcome="ok")
    assert await dead.write_pending() == 2
    dead.record(1, app_kind="feed", app_id="calendar-feed", door="feed", action="third", outcome="ok")
    assert dead._journal is not None and dead._writer is not None
    dead._writer.cancel()  # a dead process runs nothing more
    dead._journal.close()
    [left] = folder.glob("*.jsonl")

    # The next process writes only the third, deletes the file and its row.
    replayed = await AccessLog(campus.sessions, folder).replay_stopped()
    assert replayed == 1
    assert await written(campus) == ["first", "second", "third"]
    assert not left.exists()
    async with campus.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(AccessJournalState)) == 0


def journaling_process(folder: Path) -> subprocess.Popen[str]:
    """A process that makes a journal in ``folder``, appends one entry and runs until its stdin closes."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from campus_mcp.access_journal import Journal, JournalEntry;"
            "j = Journal.create(Path(sys.argv[1]));"
            "j.append(JournalEntry.now(1, 'feed', 'calendar-feed', 'feed', 'alive', 'ok'));"
            "print('ready', flush=True); sys.stdin.read()",
            str(folder),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def test_a_running_process_journal_is_left_alone(campus_factory: CampusFactory, tmp_path: Path) -> None:
    campus = await campus_factory(demo=True)
    folder = tmp_path / "journal"
    # Another process makes a journal, appends an entry and keeps running (its lock held).
    child = journaling_process(folder)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert await AccessLog(campus.sessions, folder).replay_stopped() == 0
        assert len(list(folder.glob("*.jsonl"))) == 1
    finally:
        child.communicate("")  # its stdin closes: it ends, its lock with it
    # Now it is a stopped process's journal.
    assert await AccessLog(campus.sessions, folder).replay_stopped() == 1
    assert await written(campus) == ["alive"]


async def test_a_torn_line_is_skipped_and_the_rest_written(
    campus_factory: CampusFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    campus = await campus_factory(demo=True)
    folder = tmp_path / "journal"
    journal = Journal.create(folder)
    journal.append(entry("before"))
    os.write(journal.fd, b'[1796666400000000,1,"fe\x00\x00\n')  # what a machine crash can leave
    journal.append(entry("after"))
    os.write(journal.fd, b"[1796666401000000,1,")  # the last line, half written
    journal.close()
    with caplog.at_level(logging.WARNING, logger="campus_mcp.student_access"):
        assert await AccessLog(campus.sessions, folder).replay_stopped() == 2
    assert await written(campus) == ["before", "after"]
    said = " ".join(record.getMessage() for record in caplog.records)
    assert "1 lines that cannot be read" in said and "ends in a torn line" in said
    assert not list(folder.iterdir())
