"""Done when: after importing the real fixtures, an MCP client answers about them through /api/mcp.

A real uvicorn server on a loopback port serves the app; the MCP SDK's client talks to
``/api/mcp`` over HTTP, as an AI client would (anonymously: the catalog is public).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.sources.banner_sync import import_banner_file
from campus_catalog.sources.calendar_ics import import_calendar
from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp.testing import CampusFactory
from mcp import Client

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
CALENDAR_FIXTURE = FIXTURES / "academic-calendar-princeton-2022-2023.ics"


@pytest.fixture
async def mcp_url(campus_factory: CampusFactory) -> AsyncIterator[str]:
    if not BANNER_FIXTURE.is_file() or not CALENDAR_FIXTURE.is_file():
        pytest.skip(f"the fixtures are not in {FIXTURES} (../shared/fixtures of the project root)")
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    await import_calendar(campus.sessions, campus.settings.timezone, path=CALENDAR_FIXTURE)
    async with serve_on_loopback(campus.app) as origin:
        yield f"{origin}/api/mcp"


async def call(url: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with Client(url, mode="legacy") as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_search_sections_and_get_section_answer_about_the_imported_sections(mcp_url: str) -> None:
    page = await call(mcp_url, "search_sections", {"term": "202131", "subject": "CSCE", "limit": 100})
    assert page["total"] == 157
    first = await call(mcp_url, "search_sections", {"term": "202131", "subject": "CSCE", "limit": 100, "offset": 100})
    crns = {s["crn"] for s in page["sections"]} | {s["crn"] for s in first["sections"]}
    assert len(crns) == 157

    section = await call(mcp_url, "get_section", {"crn": "45405", "term": "202131"})
    assert (section["course_code"], section["title"], section["section_number"]) == ("CSCE 110", "PROGRAMMING I", "500")
    assert [
        (m["meeting_type"], m["days"], m["start"], m["end"], m["building"], m["room"]) for m in section["meetings"]
    ] == [
        ("Laboratory", "F", "08:20", "10:00", "ZACH", "582"),
        ("Lecture", "MWF", "13:50", "14:40", "HRBB", "124"),
    ]
    assert [(i["name"], i["primary"]) for i in section["instructors"]] == [("Ki Hwan K. Yum", True)]
    assert section["seats"] == {"capacity": 21, "enrolled": 21, "available": 0}
    sources = {s["key"]: s for s in section["advisory"]["data_sources"]}
    assert sources["sections"]["source"].startswith("Banner class schedule")


async def test_university_events_gives_the_registrars_dates(mcp_url: str) -> None:
    december = await call(mcp_url, "university_events", {"start_date": "2022-12-01", "end_date": "2022-12-31"})
    by_title = {e["title"]: e for e in december["events"]}
    finals = by_title["Fall Term Final Examinations"]
    assert (finals["start_date"], finals["end_date"], finals["all_day"]) == ("2022-12-17", "2022-12-23", True)
    assert by_title["Last Day of Scheduled Classes"]["start_date"] == "2022-12-08"
