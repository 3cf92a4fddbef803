"""DESIGN §3 (seed 001): a campus with no catalog source configured and no catalog data, outside
demo mode, lists no catalog tool (issue 24, point 11): before, all 17 were listed and answered
empty lists ("no terms"), which a model repeats as "there are no classes". With data (an import
by hand) or a source, they are there."""

from __future__ import annotations

from pathlib import Path

from campus_catalog.operations import catalog_operations
from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusFactory, CampusHarness, harness_app, load_plugins

from .conftest import seed_catalog

CATALOG_TOOLS = {operation.name for operation in catalog_operations()}


async def listed_tools(campus: CampusHarness) -> set[str]:
    async with campus.mcp() as client:
        return {tool.name for tool in (await client.list_tools()).tools}


async def test_no_source_and_no_data_lists_no_catalog_tool(campus_factory: CampusFactory) -> None:
    assert len(CATALOG_TOOLS) == 17
    bare = await campus_factory(plugins=["catalog"], demo_mode=False)
    assert not (await listed_tools(bare)) & CATALOG_TOOLS
    assert "list_terms" not in bare.instructions()

    # An administrator's import by hand: the server started again offers every tool, with data.
    async with bare.sessions() as session:
        await seed_catalog(session, campus_today(bare.settings.timezone))
    registry = load_plugins(bare.settings)
    restarted = CampusHarness(app=harness_app(registry), registry=registry)
    try:
        assert await listed_tools(restarted) >= CATALOG_TOOLS
        terms = await restarted.call("list_terms", {})
        assert not terms.is_error and terms.structured_content is not None
        assert terms.structured_content["terms"]
    finally:
        await restarted.close()


async def test_a_configured_source_lists_the_catalog_tools_before_any_data(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    calendar = tmp_path / "calendar.ics"
    calendar.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", encoding="utf-8")
    campus = await campus_factory(
        plugins=["catalog"], demo_mode=False, plugin_settings={"catalog": {"calendar_file": str(calendar)}}
    )
    assert await listed_tools(campus) >= CATALOG_TOOLS
