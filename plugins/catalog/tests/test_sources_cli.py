"""``campus-mcp import banner|calendar|finals`` and what ``campus-mcp jobs list`` then shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campus_catalog.cli import import_group
from campus_mcp.testing import cli_main as main
from click.testing import CliRunner

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
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
    assert "157 sections in 202131: 157 new, 0 changed, 0 unchanged; 0 mapping problem(s)" in first.output
    second = runner.invoke(import_group, ["banner", "--file", str(BANNER_FIXTURE)], env=env)
    assert "157 sections in 202131: 0 new, 0 changed, 157 unchanged" in second.output

    page = json.loads(BANNER_FIXTURE.read_text())
    crn = page["data"][5]["courseReferenceNumber"]
    page["data"][5]["meetingsFaculty"][0]["meetingTime"]["startDate"] = "2021-08-30"  # not MM/DD/YYYY
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(page))
    third = runner.invoke(import_group, ["banner", "--file", str(broken)], env=env)
    assert third.exit_code == 0, third.output
    assert f"lost CRN {crn}: meeting 1: dates '2021-08-30'-'12/15/2021' are not MM/DD/YYYY" in third.output

    listing = runner.invoke(main, ["jobs", "list"], env=env)
    assert listing.exit_code == 0, listing.output
    runs = [line for line in listing.output.splitlines() if "catalog.import.banner" in line]
    assert len(runs) == 3
    assert "partial" in runs[0] and f"lost 1: CRN {crn}" in runs[0]  # newest first
    assert "ok" in runs[1] and "items 157" in runs[1]


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
