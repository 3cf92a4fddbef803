"""The enrollment feed sets up the students it names on a campus that signs in with SAML or CAS
only, as with OpenID Connect (issue 35, point 1): ``campus-mcp import enrollments`` and the nightly
job (``campus-mcp jobs run schedule.enrollment_feed``), each a real command in a subprocess.

Before, only ``CAMPUS_MCP_OIDC_ISSUER`` made the feed create students, so a SAML-only or CAS-only
campus got every row of a student not signed in yet refused as "unknown student".
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from campus_mcp.testing import CampusHarness
from sqlalchemy import text

FEED_JOB = "schedule.enrollment_feed"

SIGN_INS = {
    # Only that sign-in's own setting: nothing of OpenID Connect.
    "saml": {"CAMPUS_MCP_SAML_IDP_METADATA": "https://idp.campus.example/metadata.xml"},
    "cas": {"CAMPUS_MCP_CAS_SERVER_URL": "https://cas.campus.example/cas"},
}


def campus_mcp(campus: CampusHarness, folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``campus-mcp ARGS`` of this virtualenv in a subprocess, on the campus's database."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "campus-mcp"), *args],
        env={
            "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
            "CAMPUS_MCP_PLUGINS": "catalog,schedule",
            "CAMPUS_MCP_DEMO": "false",
            "CAMPUS_MCP_CONFIG": str(folder / "no-config.toml"),
            "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key-" + "k" * 32,
            "PATH": str(Path(sys.executable).parent),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def feed_students(campus: CampusHarness) -> dict[str, tuple[str, ...]]:
    """Each student the feed created (a campus id and no way in) with their CRNs."""
    async with campus.sessions() as session:
        rows = await session.execute(
            text(
                "SELECT s.campus_id, e.crn FROM students s JOIN schedule_enrollments e ON e.student_id = s.id "
                "WHERE s.campus_id IS NOT NULL AND s.password_hash IS NULL AND s.oidc_subject IS NULL "
                "ORDER BY s.campus_id, e.crn"
            )
        )
        found: dict[str, tuple[str, ...]] = {}
        for campus_id, crn in rows:
            found[campus_id] = (*found.get(campus_id, ()), crn)
        return found


@pytest.mark.parametrize("sign_in", sorted(SIGN_INS))
async def test_a_saml_or_cas_campus_feed_sets_up_students_not_signed_in_yet(
    schedule_campus: CampusHarness, tmp_path: Path, sign_in: str
) -> None:
    by_hand = tmp_path / "by-hand.csv"
    by_hand.write_text("student,term,crn\n009123456,202710,21001\n009123456,202710,21002\n", encoding="utf-8")
    run = await asyncio.to_thread(
        campus_mcp, schedule_campus, tmp_path, "import", "enrollments", str(by_hand), **SIGN_INS[sign_in]
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 row(s): 2 added" in run.stdout and "1 student(s) not signed in yet created" in run.stdout, run.stdout
    assert "unknown student" not in run.stdout
    assert await feed_students(schedule_campus) == {"009123456": ("21001", "21002")}

    # The nightly job, as the scheduler runs it, on the feed file campus IT set.
    nightly = tmp_path / "nightly.csv"
    nightly.write_text("009123456,202710,21001\n009654321,202710,21003\n", encoding="utf-8")
    job = await asyncio.to_thread(
        campus_mcp,
        schedule_campus,
        tmp_path,
        "jobs",
        "run",
        FEED_JOB,
        CAMPUS_MCP_SCHEDULE_ENROLLMENT_FEED=str(nightly),
        **SIGN_INS[sign_in],
    )
    assert job.returncode == 0, job.stdout + job.stderr
    assert f"{FEED_JOB}: ok, 2 item(s)" in job.stdout, job.stdout
    assert await feed_students(schedule_campus) == {"009123456": ("21001", "21002"), "009654321": ("21003",)}
    runs = await schedule_campus.job_runs(FEED_JOB)
    assert [r.outcome for r in runs] == ["ok"] and "1 student(s) not signed in yet created" in runs[0].summary


async def test_without_a_campus_sign_in_the_feed_still_refuses_an_unknown_student(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    feed = tmp_path / "local.csv"
    feed.write_text("009123456,202710,21001\n", encoding="utf-8")
    # An issuer without the client it registered is no sign-in either: nobody could sign in with it.
    run = await asyncio.to_thread(
        campus_mcp,
        schedule_campus,
        tmp_path,
        "import",
        "enrollments",
        str(feed),
        CAMPUS_MCP_OIDC_ISSUER="https://idp.campus.example",
    )
    assert "refused unknown_student: 1 row(s): line 1" in run.stdout, run.stdout + run.stderr
    assert run.returncode == 1
    assert await feed_students(schedule_campus) == {}


async def test_the_feed_s_name_column_names_students_and_the_help_says_what_the_columns_are(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    """Issue 35, point 6: a student the feed created was shown by their student number. The feed's
    fourth column names them; a name the campus sign-in gave is theirs and stays."""
    async with schedule_campus.sessions() as session:
        # A student the feed created before this rule (their number as name), and one who signed in.
        await session.execute(
            text(
                "INSERT INTO students (username, display_name, campus_id, is_demo, created_at, session_generation) "
                "VALUES ('009000001', '009000001', '009000001', false, CURRENT_TIMESTAMP, 0), "
                "('009000002', 'Grace Hopper', '009000002', false, CURRENT_TIMESTAMP, 0)"
            )
        )
        await session.commit()
    feed = tmp_path / "named.csv"
    feed.write_text(
        "student,term,crn,name\n"
        "009123456,202710,21001,Ada Lovelace\n"
        "009000001,202710,21001,Alan Turing\n"
        "009000002,202710,21001,G. Hopper\n"
        "009777777,202710,21001\n",
        encoding="utf-8",
    )
    run = await asyncio.to_thread(
        campus_mcp, schedule_campus, tmp_path, "import", "enrollments", str(feed), **SIGN_INS["cas"]
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "refused: none" in run.stdout and "2 student(s) named from the name column" in run.stdout, run.stdout
    async with schedule_campus.sessions() as session:
        rows = await session.execute(text("SELECT campus_id, display_name FROM students WHERE campus_id IS NOT NULL"))
        names = {campus_id: name for campus_id, name in rows}
    assert names == {
        "009123456": "Ada Lovelace",
        "009000001": "Alan Turing",
        "009000002": "Grace Hopper",  # the sign-in's name is kept
        "009777777": "",  # no name from anywhere: never the number
    }

    helped = await asyncio.to_thread(campus_mcp, schedule_campus, tmp_path, "import", "enrollments", "--help")
    assert helped.returncode == 0, helped.stderr
    words = " ".join(helped.stdout.split())
    assert "username or email, term, CRN" not in words
    assert "CSV rows of student, term, CRN[, name]" in words and "campus student id" in words, words


# The feed's ids under the sign-ins' rule (issue 35, point 10): each row, the problem it is refused for.
UNSAFE_FEED_IDS = {
    "S2001 attacker": "the student id contains a space",
    "0091\u200b23456": "the student id contains an invisible character (U+200B ZERO WIDTH SPACE)",
    "009123457\u202e": "the student id contains an invisible character (U+202E RIGHT-TO-LEFT OVERRIDE)",
    "00912\x1b[2J3458": "the student id contains a control character (U+001B)",
    "0091234\u202859": "the student id contains whitespace (U+2028 LINE SEPARATOR)",
    "009123460\u00a0": "the student id contains whitespace (U+00A0 NO-BREAK SPACE)",
    "\uff10\uff10\uff19123461": "(U+FF10 FULLWIDTH DIGIT ZERO), which looks like 0",
    "12345": "the student id does not have the form of a student id on this campus (CAMPUS_MCP_CAMPUS_ID_PATTERN)",
}
HIDDEN = ("\u200b", "\u202e", "\x1b", "\u2028", "\u00a0")


async def test_a_feed_row_whose_id_no_sign_in_could_have_is_refused_and_named_by_its_line(
    schedule_campus: CampusHarness, tmp_path: Path
) -> None:
    """Issue 35, point 10's rule for the feed's own ids: a row whose id fails the campus's pattern
    or holds a control, invisible or look-alike character creates no student (no sign-in could ever
    be them, or one would pass for another's), and is counted and listed by its line and problem,
    with no invisible character written raw. Spaces around the id are the CSV's."""
    pattern = {"CAMPUS_MCP_CAMPUS_ID_PATTERN": r"0\d{8}", **SIGN_INS["saml"]}
    rows = ["009123456,202710,21001", " 009123462 ,202710,21001"]
    rows += [f"{campus_id},202710,21001" for campus_id in UNSAFE_FEED_IDS]
    feed = tmp_path / "ids.csv"
    feed.write_text("student,term,crn\n" + "\n".join(rows) + "\n", encoding="utf-8")
    run = await asyncio.to_thread(campus_mcp, schedule_campus, tmp_path, "import", "enrollments", str(feed), **pattern)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "10 row(s): 2 added" in run.stdout and f"refused: {len(UNSAFE_FEED_IDS)} invalid student id" in run.stdout
    listed = run.stdout.split("refused invalid_student_id: ", 1)[1].split("\n", 1)[0]
    assert listed.startswith(f"{len(UNSAFE_FEED_IDS)} row(s): "), run.stdout
    for line, problem in enumerate(UNSAFE_FEED_IDS.values(), start=4):
        assert f"line {line}: " in listed and problem in listed, (line, problem, listed)
    assert not any(character in run.stdout + run.stderr for character in HIDDEN), ascii(run.stdout)
    assert "attacker" not in run.stdout  # the id is not repeated, only what is wrong with it
    assert await feed_students(schedule_campus) == {"009123456": ("21001",), "009123462": ("21001",)}

    # The nightly job applies the same rule, and its run record lists the rows.
    job = await asyncio.to_thread(
        campus_mcp,
        schedule_campus,
        tmp_path,
        "jobs",
        "run",
        FEED_JOB,
        CAMPUS_MCP_SCHEDULE_ENROLLMENT_FEED=str(feed),
        **pattern,
    )
    assert job.returncode == 0, job.stdout + job.stderr
    assert not any(character in job.stdout + job.stderr for character in HIDDEN), ascii(job.stdout)
    [nightly] = await schedule_campus.job_runs(FEED_JOB)
    assert nightly.outcome == "partial", nightly
    assert nightly.lost["invalid_student_id"].startswith(f"{len(UNSAFE_FEED_IDS)} row(s): line 4: the student id")
    assert await feed_students(schedule_campus) == {"009123456": ("21001",), "009123462": ("21001",)}
