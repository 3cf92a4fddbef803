"""The catalog's settings are a plugin settings model (issue 10, point 2): a ``[plugins.catalog]``
table of ``campus-mcp.toml`` configures the sources and the campus words, the override office
reaches ``check_schedule``'s answer, the descriptions and the instructions, and the
``CAMPUS_MCP_CATALOG_*`` variables still work (and win over the file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campus_mcp.testing import CampusFactory, CampusHarness

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
SOURCE_VARIABLES = ("BANNER_URL", "BANNER_FILE", "CALENDAR_URL", "CALENDAR_FILE", "PROGRAMS_URL", "PROGRAMS_FILE")
WORD_VARIABLES = ("OVERRIDE_OFFICE", "STUDENT_SYSTEM_NAME")


@pytest.fixture
def config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    for name in SOURCE_VARIABLES + WORD_VARIABLES:
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    path = tmp_path / "campus-mcp.toml"
    path.write_text(
        "[plugins.catalog]\n"
        f"banner_file = {json.dumps(str(BANNER_FIXTURE))}\n"
        'override_office = "the registrar\'s override desk"\n'
        'student_system_name = "SelfService"\n'
    )
    monkeypatch.setenv("CAMPUS_MCP_CONFIG", str(path))
    return path


def first_crns(count: int) -> list[str]:
    return [s["courseReferenceNumber"] for s in json.loads(BANNER_FIXTURE.read_text())["data"][:count]]


async def descriptions(campus: CampusHarness) -> dict[str, str]:
    async with campus.mcp() as client:
        return {t.name: t.description or "" for t in (await client.list_tools()).tools}


async def test_a_toml_table_sets_the_banner_file_and_the_override_office(
    campus_factory: CampusFactory, config: Path
) -> None:
    campus = await campus_factory(plugins=["catalog"])
    # The banner file of the table turns on the daily import, which reads it.
    run = await campus.run_job("catalog.sections_sync")
    assert (run.outcome, run.items) == ("ok", 157), run
    async with campus.mcp() as client:
        result = await client.call_tool("check_schedule", {"crns": first_crns(2), "term": "202131"})
    assert not result.is_error and result.structured_content is not None, result.content
    assert result.structured_content["ask_for_overrides"].startswith(
        "Overrides come from the registrar's override desk."
    )
    tools = await descriptions(campus)
    assert "the registrar's override desk" in tools["check_schedule"]
    assert "SelfService" in tools["get_section"]
    assert "Overrides (from the registrar's override desk)" in campus.instructions()
    # The same object reaches the REST twin: it answers with the same words.
    async with campus.rest() as rest:
        response = await rest.get(f"/api/v1/catalog/schedule_check?crns={','.join(first_crns(2))}&term=202131")
    assert response.status_code == 200, response.text
    assert response.json()["ask_for_overrides"] == result.structured_content["ask_for_overrides"]


async def test_the_old_variables_still_work_and_win_over_the_file(
    campus_factory: CampusFactory, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_OVERRIDE_OFFICE", "the dean of students")
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_FILE", "")  # an empty variable: no Banner at all
    campus = await campus_factory(plugins=["catalog"])
    assert "catalog.sections_sync" not in campus.registry.jobs
    assert "the dean of students" in (await descriptions(campus))["check_schedule"]
    catalog = campus.deployment.plugin_settings("catalog")
    assert (catalog.override_office, catalog.student_system_name) == ("the dean of students", "SelfService")
