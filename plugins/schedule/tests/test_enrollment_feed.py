"""Campus IT's enrollment feed (issue 11), through the real ``campus-mcp import enrollments``
command and the scheduled job run as the scheduler runs it (``CampusHarness.run_job``).

What campus IT relies on: a second run of the same file changes no row; every row the campus
cannot place is counted and listed in the run record by kind; a partial file never wipes a
schedule; a file that says its term is complete takes away that term's vanished feed sections
only, and never a section the student added.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import Term
from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusFactory, CampusHarness, JobRunRecord
from campus_mcp.testing import cli_main as main
from campus_schedule.enrollment import set_term_sections
from campus_schedule.models import Enrollment
from click.testing import CliRunner, Result
from sqlalchemy import select, text

from .conftest import add_students, seed_schedule_catalog

IMPORT_JOB = "schedule.import.enrollments"
# A campus that signs in with OpenID Connect: the issuer and the client it registered.
OIDC = {"CAMPUS_MCP_OIDC_ISSUER": "https://idp.campus.example", "CAMPUS_MCP_OIDC_CLIENT_ID": "campus-mcp"}
FEED_JOB = "schedule.enrollment_feed"

# One good row of each way to name a student, and one bad row of each kind. 41001 is a real CRN,
# of Spring 2027; 21004 is a cancelled section of Fall 2026.
FEED = """student,term,crn
student1,202710,21001
STUDENT1@example.edu,202710,21002
student2@example.edu,202710,21003
student2,202630,31001
nobody-here,202710,21001
student1,202710,99999
student1,202710,41001
student1,202710
,202710,21001
student3,202710,21004
student3,209910,21001
"""
REFUSED = {
    "unknown_student": 1,
    "unknown_crn": 1,
    "crn_in_another_term": 1,
    "malformed_row": 2,
    "cancelled_section": 1,
    "unknown_term": 1,
}


def _write(folder: Path, name: str, content: str) -> Path:
    path = folder / name
    path.write_text(content, encoding="utf-8")
    return path


async def _dump(campus: CampusHarness) -> list[tuple[Any, ...]]:
    """Every enrollment row, every column, as the database holds it."""
    async with campus.sessions() as session:
        rows = await session.execute(
            text(
                "SELECT e.id, s.username, e.term_uid, e.crn, e.section_id, e.source, e.created_at "
                "FROM schedule_enrollments e JOIN students s ON s.id = e.student_id ORDER BY e.id"
            )
        )
        return [tuple(row) for row in rows]


def _schedules(dump: list[tuple[Any, ...]]) -> set[tuple[str, str, str, str]]:
    return {(username, term, crn, source) for _id, username, term, crn, _section, source, _at in dump}


async def _import(campus: CampusHarness, path: Path, *options: str, **more_env: str) -> Result:
    env = more_env | {
        "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
        "CAMPUS_MCP_PLUGINS": "catalog,schedule",
        "CAMPUS_MCP_CONFIG": str(path.parent / "no-config.toml"),
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key",
    }
    # The command runs its own event loop (asyncio.run), as it does from a shell: off this one.
    return await asyncio.to_thread(
        CliRunner().invoke, main, ["import", "enrollments", str(path), *options], env=env, catch_exceptions=False
    )


async def test_with_an_identity_provider_the_feed_keeps_rows_of_students_not_signed_in_yet(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    # Issue 26.4: the nightly feed refuses nobody who is enrolled. With an identity provider the
    # first column is the campus id; a student not signed in yet is created with it, no way in.
    feed = "student,term,crn\nS7001,202710,21001\ns7001,202710,21002\nnew@campus.example,202710,21001\n"
    path = _write(tmp_path, "idp.csv", feed)
    run = await _import(schedule_campus, path, **OIDC)
    assert run.exit_code == 0, run.output
    assert "3 row(s): 2 added" in run.output and "; 1 student(s) not signed in yet created" in run.output
    # An email names a person, not a campus id: refused as before.
    assert "refused unknown_student: 1 row(s): line 4" in run.output
    async with schedule_campus.sessions() as session:
        row = (
            await session.execute(
                text("SELECT id, username, password_hash, oidc_subject FROM students WHERE campus_id = 's7001'")
            )
        ).one()
        crns = (await session.scalars(select(Enrollment.crn).where(Enrollment.student_id == row[0]))).all()
    assert row[1:] == ("s7001", None, None) and sorted(crns) == ["21001", "21002"]
    again = await _import(schedule_campus, path, **OIDC)
    assert "0 added, 2 already there" in again.output and "not signed in yet created" not in again.output
    # Without an identity provider an unknown student is refused, as before.
    local = await _import(schedule_campus, _write(tmp_path, "local.csv", "S7002,202710,21001\n"))
    assert "refused unknown_student: 1 row(s): line 1" in local.output


def _assert_refused_by_kind(run: JobRunRecord) -> None:
    assert run.outcome == "partial", run
    assert sorted(run.lost) == sorted(REFUSED), run.lost
    for kind, count in REFUSED.items():
        assert run.lost[kind].startswith(f"{count} row(s): line "), (kind, run.lost[kind])
    # Each refused row is named by its line, so campus IT can find it in the file.
    assert "line 6" in run.lost["unknown_student"]
    assert "line 7" in run.lost["unknown_crn"] and "99999" in run.lost["unknown_crn"]
    assert "line 8" in run.lost["crn_in_another_term"] and "202720" in run.lost["crn_in_another_term"]
    assert "line 9" in run.lost["malformed_row"] and "line 10" in run.lost["malformed_row"]
    assert "line 11" in run.lost["cancelled_section"]
    assert "line 12" in run.lost["unknown_term"]
    # A person's identifier from the file is not copied into the record.
    assert "nobody-here" not in str(run.lost)


async def test_import_twice_changes_no_row_and_counts_refused_rows_by_kind(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    path = _write(tmp_path, "enrollments.csv", FEED)
    first = await _import(schedule_campus, path)
    assert first.exit_code == 0, first.output
    assert "11 row(s): 4 added, 0 already there, 0 removed" in first.output
    after_first = await _dump(schedule_campus)
    assert _schedules(after_first) == {
        ("student1", "202710", "21001", "feed"),
        ("student1", "202710", "21002", "feed"),  # by email, in any case
        ("student2", "202710", "21003", "feed"),
        ("student2", "202630", "31001", "feed"),
    }

    second = await _import(schedule_campus, path)
    assert second.exit_code == 0, second.output
    assert "11 row(s): 0 added, 4 already there, 0 removed" in second.output
    assert await _dump(schedule_campus) == after_first

    runs = await schedule_campus.job_runs(IMPORT_JOB)
    assert len(runs) == 2
    for run in runs:
        _assert_refused_by_kind(run)
        assert run.items == 4
    assert runs[0].lost == runs[1].lost


async def test_a_partial_file_leaves_schedules_alone(schedule_campus: CampusHarness, tmp_path: Path) -> None:
    assert (await _import(schedule_campus, _write(tmp_path, "full.csv", FEED))).exit_code == 0
    before = _schedules(await _dump(schedule_campus))
    partial = _write(tmp_path, "partial.csv", "student2,202710,21003\n")
    result = await _import(schedule_campus, partial)
    assert result.exit_code == 0, result.output
    assert "1 row(s): 0 added, 1 already there, 0 removed (complete terms: none)" in result.output
    assert _schedules(await _dump(schedule_campus)) == before


async def test_a_complete_term_loses_vanished_feed_sections_of_that_term_only(
    schedule_campus: CampusHarness, ids: dict[str, int], tmp_path: Path
) -> None:
    assert (await _import(schedule_campus, _write(tmp_path, "full.csv", FEED))).exit_code == 0
    async with schedule_campus.sessions() as session:
        fall = (await session.scalars(select(Term).where(Term.uid == "202710"))).one()
        # student3 adds a section on their own (the My schedule page's edit).
        await set_term_sections(session, ids["student3"], fall, ["21003"])
    # Fall 2026 now lists student1's COMP 1000 only, and says the term is complete.
    complete = _write(tmp_path, "complete.csv", "student1,202710,21001\n*,202710,COMPLETE\n")
    result = await _import(schedule_campus, complete)
    assert result.exit_code == 0, result.output
    assert "1 row(s): 0 added, 1 already there, 2 removed (complete terms: 202710)" in result.output
    assert _schedules(await _dump(schedule_campus)) == {
        ("student1", "202710", "21001", "feed"),
        ("student2", "202630", "31001", "feed"),  # another term: untouched
        ("student3", "202710", "21003", "student"),  # the student's own addition: never removed
    }
    # --complete-term says the same as the mark row.
    again = await _import(
        schedule_campus, _write(tmp_path, "none.csv", "student1,202630,31001\n"), "--complete-term", "202630"
    )
    assert again.exit_code == 0, again.output
    assert _schedules(await _dump(schedule_campus)) == {
        ("student1", "202710", "21001", "feed"),
        ("student1", "202630", "31001", "feed"),
        ("student3", "202710", "21003", "student"),
    }


async def test_a_complete_term_the_campus_does_not_know_is_refused(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    assert (await _import(schedule_campus, _write(tmp_path, "full.csv", FEED))).exit_code == 0
    before = await _dump(schedule_campus)
    typo = await _import(
        schedule_campus, _write(tmp_path, "typo.csv", "student1,202710,21001\n"), "--complete-term", "20271"
    )
    assert "refused unknown_term: 1 row(s): --complete-term 20271" in typo.output
    assert await _dump(schedule_campus) == before


@pytest.fixture
async def feed_campus(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[CampusHarness, Path]:
    """A campus whose schedule family reads a feed file, set as campus IT sets it."""
    path = tmp_path / "feed.csv"
    monkeypatch.setenv("CAMPUS_MCP_SCHEDULE_ENROLLMENT_FEED", str(path))
    harness = await campus_factory(plugins=["catalog", "schedule"], demo=False)
    async with harness.sessions() as session:
        await add_students(session)
        await session.commit()
        await seed_schedule_catalog(session, campus_today(harness.settings.timezone))
    return harness, path


async def test_the_feed_job_is_idempotent_and_lists_refused_rows(feed_campus: tuple[CampusHarness, Path]) -> None:
    campus, path = feed_campus
    path.write_text(FEED, encoding="utf-8")
    first = await campus.run_job(FEED_JOB)
    _assert_refused_by_kind(first)
    assert first.items == 4 and "4 added" in first.summary
    after_first = await _dump(campus)
    assert len(after_first) == 4
    second = await campus.run_job(FEED_JOB)
    _assert_refused_by_kind(second)
    assert second.items == 4 and "0 added, 4 already there, 0 removed" in second.summary
    assert second.lost == first.lost
    assert await _dump(campus) == after_first

    # The feed shrinks without saying its term is complete: nothing is taken away.
    path.write_text("student1,202710,21001\n", encoding="utf-8")
    shrunk = await campus.run_job(FEED_JOB)
    assert shrunk.outcome == "ok", shrunk
    assert await _dump(campus) == after_first


async def test_a_complete_mark_without_a_valid_row_of_its_term_removes_nothing(
    feed_campus: tuple[CampusHarness, Path],
) -> None:
    """A broken export that kept only the mark row would otherwise empty the whole term."""
    campus, path = feed_campus
    path.write_text(FEED, encoding="utf-8")
    await campus.run_job(FEED_JOB)
    before = await _dump(campus)
    path.write_text("student,term,crn\n*,202710,COMPLETE\n", encoding="utf-8")
    run = await campus.run_job(FEED_JOB)
    assert run.outcome == "partial", run
    assert list(run.lost) == ["complete_term_without_rows"], run.lost
    assert run.lost["complete_term_without_rows"].startswith("1 row(s): line 2: term 202710"), run.lost
    assert "nothing of it was removed" in run.lost["complete_term_without_rows"]
    assert "0 removed (complete terms: none)" in run.summary
    assert await _dump(campus) == before


async def test_complete_term_option_with_only_refused_rows_of_that_term_removes_nothing(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    assert (await _import(schedule_campus, _write(tmp_path, "full.csv", FEED))).exit_code == 0
    before = await _dump(schedule_campus)
    # Every Fall 2026 row is one the campus cannot place; a Summer row is fine.
    broken = _write(tmp_path, "broken.csv", "student1,202710,99999\nstudent2,202630,31001\n")
    result = await _import(schedule_campus, broken, "--complete-term", "202710")
    assert result.exit_code == 0, result.output
    assert "refused complete_term_without_rows: 1 row(s): --complete-term 202710: term 202710" in result.output
    assert "refused unknown_crn: 1 row(s): line 1" in result.output
    assert "0 removed (complete terms: none)" in result.output
    assert await _dump(schedule_campus) == before
