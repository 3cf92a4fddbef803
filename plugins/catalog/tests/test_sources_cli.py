"""``campus-mcp import banner|calendar|finals`` and what ``campus-mcp jobs list`` then shows."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from campus_catalog.cli import import_group
from campus_mcp.testing import cli_main as main
from click.testing import CliRunner

# ../shared/fixtures of the project root; CAMPUS_MCP_TEST_FIXTURES for a checkout elsewhere (a worktree).
FIXTURES = Path(
    os.environ.get("CAMPUS_MCP_TEST_FIXTURES") or Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
)
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
CALENDAR_FIXTURE = FIXTURES / "academic-calendar-princeton-2022-2023.ics"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    if not BANNER_FIXTURE.is_file() or not CALENDAR_FIXTURE.is_file():
        pytest.skip(f"the fixtures are not in {FIXTURES} (../shared/fixtures of the project root)")
    return {
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}",
        "CAMPUS_MCP_PLUGINS": "catalog",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "no-config.toml"),
        "CAMPUS_MCP_CATALOG_BANNER_URL": "",
        "CAMPUS_MCP_CATALOG_BANNER_FILE": "",
        "CAMPUS_MCP_CATALOG_CALENDAR_URL": "",
        "CAMPUS_MCP_CATALOG_CALENDAR_FILE": "",
    }


def test_import_banner_twice_then_jobs_list(env: dict[str, str], tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(import_group, ["banner", "--file", str(BANNER_FIXTURE)], env=env)
    assert first.exit_code == 0, first.output
    assert "157 sections in 202131: 157 new, 0 changed, 0 unchanged; 0 refused; 0 stored with gaps" in first.output
    second = runner.invoke(import_group, ["banner", "--file", str(BANNER_FIXTURE)], env=env)
    assert "157 sections in 202131: 0 new, 0 changed, 157 unchanged" in second.output

    page = json.loads(BANNER_FIXTURE.read_text())
    crn = page["data"][5]["courseReferenceNumber"]
    page["data"][5]["meetingsFaculty"][0]["meetingTime"]["startDate"] = "2021-08-30"  # not MM/DD/YYYY
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(page))
    third = runner.invoke(import_group, ["banner", "--file", str(broken)], env=env)
    assert third.exit_code == 0, third.output
    # Stored, without its dates: a gap, not a loss (issue 24, point 12: it said "lost").
    assert (
        f"stored with a gap: CRN {crn}: meeting 1: dates '2021-08-30'-'12/15/2021' are not MM/DD/YYYY; "
        "stored without dates" in third.output
    )
    assert "not stored" not in third.output and "0 refused; 1 stored with gaps" in third.output

    listing = runner.invoke(main, ["jobs", "list"], env=env)
    assert listing.exit_code == 0, listing.output
    runs = [line for line in listing.output.splitlines() if "catalog.import.banner" in line]
    assert len(runs) == 3
    assert "ok" in runs[0] and "items 157" in runs[0] and "lost" not in runs[0]  # newest first
    assert "ok" in runs[1] and "items 157" in runs[1]


def test_refused_rows_are_counted_one_by_one_and_by_kind(env: dict[str, str], tmp_path: Path) -> None:
    page = json.loads(BANNER_FIXTURE.read_text())
    page["data"] = page["data"][:7]
    page["data"][0]["term"] = "abc"  # not a term code: refused, not a term 'abc'
    page["data"][1]["term"] = "20213"
    page["data"][2] = "a string, not a section"
    page["data"][3] = 17
    page["data"][4]["meetingsFaculty"][0]["meetingTime"]["beginTime"] = "8:2O"  # stored without times
    # The natural harvest format: the term's pages as one JSON list.
    harvest = tmp_path / "harvest.json"
    harvest.write_text(json.dumps([page]))
    runner = CliRunner()
    result = runner.invoke(import_group, ["banner", "--file", str(harvest)], env=env)
    assert result.exit_code == 0, result.output
    assert "3 sections in 202131: 3 new" in result.output
    assert "4 refused (2 not a term code, 2 not an object); 1 stored with gaps" in result.output
    assert "not stored: harvest.json page 1 item 3: not a JSON object; cannot be stored" in result.output
    assert "is not a Banner term code" in result.output and "stored with a gap: CRN" in result.output

    listing = runner.invoke(main, ["jobs", "list"], env=env)
    run = next(line for line in listing.output.splitlines() if "catalog.import.banner" in line)
    assert "partial" in run and "items 3, lost 4:" in run, run
    with sqlite3.connect(tmp_path / "campus.db") as database:
        assert [uid for (uid,) in database.execute("SELECT uid FROM catalog_terms")] == ["202131"]


@contextmanager
def banner_answering(status: int) -> Iterator[str]:
    """A real HTTP server on loopback that answers every request with ``status``: Banner under load."""

    class Down(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>Service Unavailable</body></html>")

        do_POST = do_GET

        def log_message(self, *_args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Down)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/StudentRegistrationSsb/ssb"
    finally:
        server.shutdown()
        server.server_close()


def test_a_banner_answering_503_is_a_failed_run_and_one_sentence(env: dict[str, str]) -> None:
    runner = CliRunner()
    with banner_answering(503) as url:
        live = {**env, "CAMPUS_MCP_CATALOG_BANNER_URL": url, "CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP": "true"}
        result = runner.invoke(import_group, ["banner", "--live"], env=live)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip() and "Banner sections" not in line]
    assert lines == [
        "Error: Banner could not be read, nothing was imported: server: classSearch/getTerms answered HTTP 503 "
        "(retried on the next run). The run is recorded (campus-mcp jobs list)."
    ], result.output
    listing = runner.invoke(main, ["jobs", "list"], env=live)
    run = next(line for line in listing.output.splitlines() if "catalog.import.banner" in line)
    assert "failed" in run and "error: server: classSearch/getTerms answered HTTP 503 (retried on the next run)" in run


def test_import_calendar_and_finals(env: dict[str, str], tmp_path: Path) -> None:
    runner = CliRunner()
    calendar = runner.invoke(import_group, ["calendar", "--file", str(CALENDAR_FIXTURE)], env=env)
    assert calendar.exit_code == 0, calendar.output
    assert "150 calendar events: 150 new" in calendar.output

    finals = tmp_path / "finals.csv"
    finals.write_text("CRN,Date,Time,Location\n45405,12/10/2021,8:00 AM - 10:00 AM,ZACH 582\n")
    no_term = runner.invoke(import_group, ["finals", "--term", "202131", str(finals)], env=env)
    assert no_term.exit_code == 1 and "no term '202131'" in no_term.output
    runner.invoke(import_group, ["banner", "--file", str(BANNER_FIXTURE)], env=env)
    stored = runner.invoke(import_group, ["finals", "--term", "202131", str(finals)], env=env)
    assert stored.exit_code == 0, stored.output
    assert "1 exams stored; 0 row(s) could not be read" in stored.output


def test_an_import_with_nothing_configured_says_what_to_set(env: dict[str, str]) -> None:
    result = CliRunner().invoke(import_group, ["banner"], env=env)
    assert result.exit_code == 1
    assert "give --file PATH, set CAMPUS_MCP_CATALOG_BANNER_FILE, or use --live" in result.output
    live = CliRunner().invoke(import_group, ["banner", "--live"], env=env)
    assert "--live needs CAMPUS_MCP_CATALOG_BANNER_URL" in live.output


def test_import_programs_and_a_file_that_is_not_a_feed(env: dict[str, str], tmp_path: Path) -> None:
    feed = tmp_path / "programs.json"
    feed.write_text(
        json.dumps({"catalog_year": "2026-2027", "programs": [{"slug": "bs-cs", "name": "Computer Science"}]})
    )
    result = CliRunner().invoke(import_group, ["programs", str(feed)], env=env)
    assert result.exit_code == 0, result.output
    assert "1 programs stored, 0 removed; 0 could not be read" in result.output
    wrong = tmp_path / "wrong.json"
    wrong.write_text("[1, 2, 3]")
    refused = CliRunner().invoke(import_group, ["electives", str(wrong)], env=env)
    assert refused.exit_code == 1
    assert "wrong.json: elective lists feed is not a JSON object" in refused.output
