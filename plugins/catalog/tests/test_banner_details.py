"""Course details from Banner's detail pages (issue 37, point 2): saved pages imported from the
folder of the saved searchResults, or read from the campus's Banner by ``campus-mcp import banner
--details``; a search by meaning then reads the descriptions, and an import embeds again only the
courses whose description changed. The pages are written here in the shape Banner 9 serves them
(``sources/banner_details.py``), with descriptions in our own words: Banner's public pages of a
real term were not saved with the fixtures."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from campus_catalog.cli import import_group
from campus_catalog.sources.banner_details import description_text
from campus_catalog.sources.fake_banner import BASE_PATH, FakeBanner, build_app, description_html
from campus_mcp.testing import CampusHarness, TestDatabases, free_port
from click.testing import CliRunner

from .banner_campus import TAMU, imported_campus

SECTIONS = json.loads(TAMU.read_text())["data"] if TAMU.is_file() else []
# The first CRN of each course, as a harvest of the detail pages would save them.
FIRST_CRN = {
    number: min(s["courseReferenceNumber"] for s in SECTIONS if s["courseNumber"] == number)
    for number in {s["courseNumber"] for s in SECTIONS}
}
SYSTEMS = (
    "System-level programming on UNIX: processes and threads, how the operating system manages memory and "
    "files, interprocess communication with pipes and signals, and writing a command shell."
)
STRUCTURES = "Lists, stacks, queues, trees, hash tables and graphs, and the analysis of the algorithms on them."
SHELL_QUESTION = "writing my own unix shell with fork and pipes"


def prerequisites_html(*rows: tuple[str, str, str]) -> str:
    """Banner 9's getSectionPrerequisites table: one row per course, ANDed (subject name, number, grade)."""
    head = "".join(
        f"<th>{h}</th>" for h in ("And/Or", "", "Test", "Score", "Subject", "Course Number", "Level", "Grade", "")
    )
    body = "".join(
        f"<tr><td>{'And' if n else ''}</td><td></td><td></td><td></td><td>{subject}</td><td>{number}</td>"
        f"<td>Undergraduate</td><td>{grade}</td><td></td></tr>\n"
        for n, (subject, number, grade) in enumerate(rows)
    )
    return (
        "<h3>Catalog Prerequisites</h3>\n"
        f'<table class="basePreqTable"><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>'
    )


def saved_folder(folder: Path, descriptions: dict[str, str]) -> Path:
    """The TAMU page and detail pages for some courses (by number), as an administrator saves them."""
    if not TAMU.is_file():
        pytest.skip(f"the Banner fixture is not at {TAMU} (../shared/fixtures of the project root)")
    folder.mkdir(exist_ok=True)
    (folder / "searchResults-202131.json").write_text(TAMU.read_text())
    for number, text in descriptions.items():
        crn = FIRST_CRN[number]
        (folder / f"getCourseDescription-202131-{crn}.html").write_text(
            description_html(text, section_note="Honors students: see the department.")
        )
    # CSCE 313 needs 221 with a C; Banner names the subject, not its code.
    (folder / f"getSectionPrerequisites-202131-{FIRST_CRN['313']}.html").write_text(
        prerequisites_html(("Computer Sci &amp; Engr", "221", "C"))
    )
    return folder


def test_the_description_is_the_courses_text_before_the_sections_note() -> None:
    assert description_text(description_html("Fundamental concepts of biology.", "Tuesday 5:10 pm exams")) == (
        "Fundamental concepts of biology."
    )
    assert description_text(description_html("Data &amp; algorithms,\n   analysed.")) == "Data & algorithms, analysed."
    assert description_text(description_html("No course description is available.")) is None
    assert description_text("<p>A fragment without Banner's section.</p>") == "A fragment without Banner's section."


def _courses(database: Path) -> dict[str, tuple[str | None, Any]]:
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT course_number, description, prerequisites FROM catalog_courses").fetchall()
    return {number: (description, json.loads(tree) if tree else None) for number, description, tree in rows}


def _env(database: Path, **catalog: str) -> dict[str, str]:
    env = {
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        "CAMPUS_MCP_PLUGINS": "catalog",
        "CAMPUS_MCP_CONFIG": str(database.with_suffix(".absent.toml")),
    }
    for name in ("BANNER_URL", "BANNER_FILE", "CALENDAR_URL", "CALENDAR_FILE"):
        env[f"CAMPUS_MCP_CATALOG_{name}"] = catalog.get(name.lower(), "")
    return env


def test_a_folder_of_saved_pages_imports_the_sections_then_the_details(tmp_path: Path) -> None:
    folder = saved_folder(tmp_path / "saved", {"313": SYSTEMS, "221": STRUCTURES})
    env = _env(tmp_path / "campus.db")
    runner = CliRunner()
    first = runner.invoke(import_group, ["banner", "--file", str(folder)], env=env)
    assert first.exit_code == 0, first.output
    assert "157 sections in 202131: 157 new" in first.output
    assert "details of 2 courses: 2 changed, 0 unchanged; 0 not stored" in first.output
    courses = _courses(tmp_path / "campus.db")
    assert courses["313"] == (SYSTEMS, {"course": "CSCE 221", "min_grade": "C"})  # not the section's note
    assert courses["221"] == (STRUCTURES, None) and courses["110"] == (None, None)

    # The same pages again: nothing changes, nothing is embedded again.
    again = runner.invoke(import_group, ["banner", "--details", "--file", str(folder)], env=env)
    assert again.exit_code == 0, again.output
    assert "details of 2 courses: 0 changed, 2 unchanged; 0 not stored; vectors for 0 courses, 0 sections" in (
        again.output
    )
    # One description changed: that course and its sections are embedded again, no other.
    (folder / f"getCourseDescription-202131-{FIRST_CRN['221']}.html").write_text(
        description_html(STRUCTURES + " Taught in C++.")
    )
    (folder / "getCourseDescription-202131-99999.html").write_text(description_html("A section nobody imported."))
    changed = runner.invoke(import_group, ["banner", "--details", "--file", str(folder)], env=env)
    assert changed.exit_code == 0, changed.output
    # An instructor's vector is the mean of the courses they teach: theirs too.
    teachers = {p["displayName"] for s in SECTIONS if s["courseNumber"] == "221" for p in s["faculty"]}
    assert (
        f"details of 2 courses: 1 changed, 1 unchanged; 1 not stored; "
        f"vectors for 1 courses, 11 sections, {len(teachers)} instructors"
    ) in changed.output
    assert "not stored: CRN 99999 of 202131: no section 99999 in term 202131: import the term's searchResults" in (
        changed.output
    )


async def test_a_search_by_meaning_reads_the_imported_descriptions(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    titles_only = await imported_campus(campus_databases, TAMU)
    described = await imported_campus(campus_databases, saved_folder(tmp_path / "saved", {"313": SYSTEMS}))
    try:
        for campus in (titles_only, described):
            course = (await campus.call("get_course", {"code": "CSCE 313"})).structured_content
            # A page of titles only has no description: "not loaded here", never null (issue 37, point 1).
            assert course is not None and course["description"] == (
                SYSTEMS if campus is described else "not loaded here"
            )
        before = await _first_course(titles_only, SHELL_QUESTION)
        after = await _first_course(described, SHELL_QUESTION)
        assert (before != "CSCE 313", after) == (True, "CSCE 313"), (before, after)
    finally:
        for campus in (titles_only, described):
            await campus.close()
            await campus_databases.drop(campus.settings.database_url)


async def _first_course(campus: CampusHarness, question: str) -> str:
    result = await campus.call("search_courses", {"q": question, "semantic": True})
    assert not result.is_error and result.structured_content is not None, result.content
    codes: list[str] = [c["code"] for c in result.structured_content["courses"]]
    return codes[0] if codes else ""


@contextmanager
def banner_in_a_thread(fake: FakeBanner) -> Iterator[str]:
    """The fake Banner served on loopback from a thread of its own (the command runs its own event
    loop in this one); its Banner base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(build_app(fake), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the fake Banner did not start")
            threading.Event().wait(0.02)
        yield f"http://127.0.0.1:{port}{BASE_PATH}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_details_read_from_the_campus_banner_at_its_pace(tmp_path: Path) -> None:
    if not TAMU.is_file():
        pytest.skip(f"the Banner fixture is not at {TAMU}")
    env = _env(tmp_path / "campus.db")
    runner = CliRunner()
    assert runner.invoke(import_group, ["banner", "--file", str(TAMU)], env=env).exit_code == 0
    fake = FakeBanner(
        sections=SECTIONS,
        descriptions={FIRST_CRN["313"]: SYSTEMS},
        prerequisites={FIRST_CRN["313"]: prerequisites_html(("Computer Sci &amp; Engr", "221", "C"))},
    )
    with banner_in_a_thread(fake) as url:
        live = {
            **env,
            "CAMPUS_MCP_CATALOG_BANNER_URL": url,
            "CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP": "true",
            "CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE": "6000",
        }
        # TAMU's Fall 2021 is over: a past term is read when it is named.
        result = runner.invoke(import_group, ["banner", "--details", "--term", "202131"], env=live)
        assert result.exit_code == 0, result.output
        assert "details of 15 courses read from Banner; 0 not stored; vectors for 15 courses" in result.output
        # Read a second time within the week: nothing to read, nothing lost, not a failure.
        again = runner.invoke(import_group, ["banner", "--details", "--term", "202131"], env=live)
    assert again.exit_code == 0 and "details of 0 courses read from Banner" in again.output, again.output
    courses = _courses(tmp_path / "campus.db")
    assert courses["313"] == (SYSTEMS, {"course": "CSCE 221", "min_grade": "C"})
    assert courses["110"][0] == "PROGRAMMING I: the course description."
    # Two pages a course, one section each, and nothing else: no search, no other endpoint.
    assert sorted(set(fake.endpoints_seen())) == [
        "GET searchResults/getCourseDescription",
        "GET searchResults/getSectionPrerequisites",
    ]
    assert len(fake.seen) == 30


def test_details_without_a_source_say_what_to_give(tmp_path: Path) -> None:
    env = _env(tmp_path / "campus.db")
    runner = CliRunner()
    nothing = runner.invoke(import_group, ["banner", "--details"], env=env)
    assert nothing.exit_code == 1
    assert "--details needs --file FOLDER (saved detail pages) or CAMPUS_MCP_CATALOG_BANNER_URL" in nothing.output
    both = runner.invoke(import_group, ["banner", "--details", "--live"], env=env)
    assert "--details reads course details only: give it without --live" in both.output
    a_file = tmp_path / "page.json"
    a_file.write_text("{}")
    one_file = runner.invoke(import_group, ["banner", "--details", "--file", str(a_file)], env=env)
    assert "page.json is a file: --details --file takes the folder of the saved detail pages" in one_file.output
    empty = runner.invoke(import_group, ["banner", "--details", "--file", str(tmp_path)], env=env)
    assert "no detail pages in" in empty.output and "getCourseDescription-TERM-CRN.html" in empty.output
    assert "Traceback" not in nothing.output + both.output + one_file.output + empty.output
