"""The dining plugin through the real MCP client and the real REST routes, on a migrated SQLite campus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campus_dining.jobs import REFRESH_JOB_ID
from campus_mcp import testing
from campus_mcp.testing import CampusFactory, CampusHarness, load_plugins


@pytest.fixture
async def dining(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(plugins=["dining"], demo=True)


async def test_a_student_finds_what_is_open_on_sunday(dining: CampusHarness) -> None:
    async with dining.mcp() as client:  # anonymous: opening hours are public
        result = await client.call_tool("list_dining_halls", {"open_on": "sunday"})
    assert not result.is_error
    halls = result.structured_content
    assert halls is not None
    assert [hall["name"] for hall in halls["halls"]] == ["Commons Dining Hall"]
    sunday = [h for h in halls["halls"][0]["hours"] if h["day"] == "sunday"]
    assert sunday == [
        {"day": "sunday", "opens": "10:00", "closes": "14:00", "opens_12h": "10:00 AM", "closes_12h": "2:00 PM"},
        {"day": "sunday", "opens": "16:30", "closes": "19:00", "opens_12h": "4:30 PM", "closes_12h": "7:00 PM"},
    ]
    assert json.loads(result.content[0].text) == halls  # type: ignore[union-attr]


async def test_tool_and_route_give_the_same_answer(dining: CampusHarness) -> None:
    async with dining.rest() as rest:
        listed = await rest.get("/api/v1/dining/halls")
        one = await rest.get("/api/v1/dining/halls/library-cafe")
    assert listed.status_code == 200
    assert one.status_code == 200
    via_tool = await dining.call("list_dining_halls", {})
    assert via_tool.structured_content == listed.json()
    assert listed.json()["count"] == 3
    via_tool_one = await dining.call("get_dining_hall", {"slug": "library-cafe"})
    assert via_tool_one.structured_content == one.json()
    assert one.json()["building"] == "Library"


async def test_an_unknown_hall_says_how_to_find_the_slugs(dining: CampusHarness) -> None:
    result = await dining.call("get_dining_hall", {"slug": "food-court"})
    assert result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert "'food-court'" in message and "list_dining_halls" in message
    async with dining.rest() as rest:
        response = await rest.get("/api/v1/dining/halls/food-court")
    assert response.status_code == 404
    assert response.json()["field"] == "slug"


@pytest.mark.parametrize("day", ["Sunday", "SUNDAY", " sunday "])
async def test_a_day_name_is_taken_in_any_case_by_the_tool_and_the_route(dining: CampusHarness, day: str) -> None:
    """Issue 24, point 2: ``open_on: "Sunday"`` was refused (only "sunday" was a weekday)."""
    result = await dining.call("list_dining_halls", {"open_on": day})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert [hall["name"] for hall in result.structured_content["halls"]] == ["Commons Dining Hall"]
    async with dining.rest() as rest:
        listed = await rest.get("/api/v1/dining/halls", params={"open_on": day})
    assert listed.status_code == 200, listed.text
    assert listed.json() == result.structured_content


async def test_a_day_that_is_not_a_weekday_is_refused_naming_the_field(dining: CampusHarness) -> None:
    result = await dining.call("list_dining_halls", {"open_on": "someday"})
    assert result.is_error
    assert "open_on" in result.content[0].text  # type: ignore[union-attr]


async def test_the_refresh_job_keeps_good_halls_and_reports_the_lost_one(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed = tmp_path / "dining.json"
    feed.write_text(
        json.dumps(
            {
                "halls": [
                    {
                        "slug": "commons",
                        "name": "Commons",
                        "hours": [{"day": "monday", "opens": "07:00", "closes": "20:00"}],
                    },
                    {
                        "slug": "broken-hall",
                        "name": "Broken",
                        "hours": [{"day": "funday", "opens": "07:00", "closes": "9"}],
                    },
                ]
            }
        )
    )
    monkeypatch.setenv("CAMPUS_MCP_DINING_FEED", str(feed))
    campus = await campus_factory(plugins=["dining"], demo=False)
    run = await campus.run_job(REFRESH_JOB_ID)
    assert run.outcome == "partial"
    assert run.items == 1
    assert list(run.lost) == ["broken-hall"]
    assert "day" in run.lost["broken-hall"]
    halls = (await campus.call("list_dining_halls", {})).structured_content
    assert halls is not None and [h["slug"] for h in halls["halls"]] == ["commons"]


async def test_an_unreadable_feed_fails_the_run_with_its_error(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed = tmp_path / "dining.json"
    feed.write_text("{not json")
    monkeypatch.setenv("CAMPUS_MCP_DINING_FEED", str(feed))
    campus = await campus_factory(plugins=["dining"], demo=False)
    run = await campus.run_job(REFRESH_JOB_ID)
    assert run.outcome == "failed"
    assert run.error is not None and run.error.startswith("JSONDecodeError")
    assert run.id in [recorded.id for recorded in await campus.job_runs(REFRESH_JOB_ID)]


def test_without_a_feed_the_plugin_offers_nothing_that_could_only_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAMPUS_MCP_DINING_FEED", raising=False)
    # Outside demo mode there is no demo feed to fall back on.
    registry = load_plugins(
        testing.test_settings(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", plugins=["dining"], demo=False)
    )
    assert "dining" in registry.plugins
    assert registry.contributions_of("dining")["tools"] == []
    assert registry.contributions_of("dining")["jobs"] == []
    assert [group for group in registry.route_groups if group.plugin == "dining"] == []
    assert [example for example in registry.tool_examples if example.plugin == "dining"] == []
