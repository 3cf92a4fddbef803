"""On a real campus, what is not loaded says so (issue 37, points 1 and 6).

A campus that is not the demo, built as the README says: TAMU's saved Banner page and the
calendar fixture imported with ``campus-mcp import`` in a subprocess, a local student. A saved
``searchResults`` page holds no course details, so ``get_course`` answered ``prerequisites: null``
and a model told the student the course had none; the sections' ``last_refresh`` stayed null
after the import (its only term is past), so the advisory sent the model to read the student
system itself; seats nobody refreshes did not say so; an empty ``university_events`` range did
not say which dates the calendar covers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import Section
from campus_mcp.testing import CampusHarness, TestDatabases, create_local_student, harness_app, load_plugins
from campus_mcp.testing import test_settings as settings_of
from campus_schedule.models import SeatWatch
from sqlalchemy import select

from .banner_campus import FIXTURES, TAMU

CALENDAR = FIXTURES / "academic-calendar-princeton-2022-2023.ics"
TERM, CRN = "202131", "45405"
PLUGINS = ["catalog", "schedule"]


def campus_mcp(url: str, folder: Path, *args: str) -> str:
    """``campus-mcp ARGS`` of this virtualenv in a subprocess, on the campus's database."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "campus-mcp"), *args],
        env={
            "CAMPUS_MCP_DATABASE_URL": url,
            "CAMPUS_MCP_PLUGINS": ",".join(PLUGINS),
            "CAMPUS_MCP_DEMO": "false",
            "CAMPUS_MCP_CONFIG": str(folder / "no-config.toml"),
            "PATH": str(Path(sys.executable).parent),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
async def campus(
    campus_databases: TestDatabases, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[CampusHarness, int]]:
    if not TAMU.is_file() or not CALENDAR.is_file():
        pytest.skip(f"the fixtures are not in {FIXTURES} (../shared/fixtures of the project root)")
    url = await campus_databases.migrated_copy(PLUGINS)
    folder = tmp_path_factory.mktemp("tamu")
    assert "157 sections in 202131" in campus_mcp(url, folder, "import", "banner", "--file", str(TAMU))
    assert "150 calendar events" in campus_mcp(url, folder, "import", "calendar", "--file", str(CALENDAR))
    registry = load_plugins(settings_of(url, plugins=PLUGINS, demo=False))
    harness = CampusHarness(app=harness_app(registry), registry=registry)
    async with harness.sessions() as session:
        student = await create_local_student(session, "aggie", "a long enough password")
        section = await session.scalar(select(Section).where(Section.crn == CRN))
        assert section is not None
        session.add(SeatWatch(student_id=student.id, term_uid=TERM, section_id=section.id, crn=CRN))
        await session.commit()
        student_id = student.id
    yield harness, student_id
    await harness.close()
    await campus_databases.drop(url)


async def answer(campus: CampusHarness, tool: str, arguments: dict[str, Any], **who: Any) -> dict[str, Any]:
    result = await campus.call(tool, arguments, **who)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_the_imported_sections_say_when_their_seats_were_read_and_that_nothing_refreshes_them(
    campus: tuple[CampusHarness, int],
) -> None:
    harness, student = campus
    section = await answer(harness, "get_section", {"crn": CRN, "term": TERM})
    sources = {s["key"]: s for s in section["advisory"]["data_sources"]}
    # The import is the sections' last refresh, though its one term is over.
    assert sources["sections"]["last_refresh"] is not None
    assert sources["sections"]["last_refresh_by_term"].keys() == {TERM}
    assert sources["sections"]["refresh"].startswith("Seats as of ")
    assert ", not refreshed: " in sources["sections"]["refresh"]

    watches = await answer(harness, "list_watches", {}, scopes=["schedule:read"], user_id=student)
    (watch,) = watches["watches"]
    assert watch["crn"] == CRN
    assert watch["seats_as_of"].startswith("Seats as of ") and ", not refreshed" in watch["seats_as_of"]

    events = await answer(harness, "university_events", {"start_date": "2022-12-01", "end_date": "2022-12-31"})
    assert events["advisory"]["data_sources"][0]["last_refresh"] is not None


async def test_a_course_whose_details_were_never_loaded_says_so_field_by_field_on_mcp_and_rest(
    campus: tuple[CampusHarness, int],
) -> None:
    harness, _student = campus
    course = await answer(harness, "get_course", {"code": "CSCE 110"})
    # A saved searchResults page has no details: each says so rather than null or [] ("none").
    for field in ("description", "prerequisites", "corequisites", "restrictions", "fees", "learning_objectives"):
        assert course[field] == "not loaded here", (field, course[field])
    note = course["not_loaded"]
    assert "prerequisites" in note and "do not say CSCE 110 has none" in note and "CSCE department" in note
    # The output schema says what the words mean, where the model reads the field.
    async with harness.mcp() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = tools["get_course"].output_schema or {}
    assert "never say none" in str(schema["properties"]["prerequisites"])
    # The REST twin answers the same words.
    async with harness.rest() as rest:
        twin = (await rest.get("/api/v1/catalog/courses/CSCE 110")).json()
    assert twin["prerequisites"] == "not loaded here" and twin["not_loaded"] == note
    brief = await answer(harness, "search_courses", {"q": "CSCE 110"})
    assert brief["courses"][0]["description"] == "not loaded here"

    instructors = await answer(harness, "search_instructors", {"q": "Yum"})
    assert instructors["instructors"][0]["rating"] == "not loaded here"
    section = await answer(harness, "get_section", {"crn": CRN, "term": TERM})
    assert section["seats_as_of"].startswith("Seats as of ") and "not refreshed" in section["seats_as_of"]
    assert section["waitlist"] == {"capacity": 0, "available": 0}  # Banner said: no waitlist


async def test_an_empty_calendar_window_says_which_dates_the_calendar_covers(campus: tuple[CampusHarness, int]) -> None:
    harness, _student = campus
    events = await answer(harness, "university_events", {"start_date": "2030-01-01", "end_date": "2030-06-30"})
    assert events["events"] == []
    assert "The calendar loaded here covers 2022-04-22 to 2023-12-15" in events["note"]
    assert "not known here, not absent" in events["note"]
    found = await answer(harness, "university_events", {"start_date": "2022-12-01", "end_date": "2022-12-31"})
    assert found["events"] and found["note"] is None
