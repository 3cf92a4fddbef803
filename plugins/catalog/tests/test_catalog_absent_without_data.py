"""DESIGN §3 (seed 001): a campus with no catalog source configured and no catalog data, outside
demo mode, lists no catalog tool (issue 24, point 11): before, all 17 were listed and answered
empty lists ("no terms"), which a model repeats as "there are no classes". With data (an import
by hand) or a source, they are there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from campus_catalog.operations import catalog_operations
from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing import offer_checks as offers
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged

from .banner_campus import TAMU
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

    # An administrator's import by hand, in this process: the same server offers every tool at once
    # (the commit bumps the catalog's data version, and the host asks the offer checks again).
    async with bare.sessions() as session:
        await seed_catalog(session, campus_today(bare.settings.timezone))
    assert await listed_tools(bare) >= CATALOG_TOOLS
    terms = await bare.call("list_terms", {})
    assert not terms.is_error and terms.structured_content is not None
    assert terms.structured_content["terms"]


async def test_a_configured_source_lists_the_catalog_tools_before_any_data(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    calendar = tmp_path / "calendar.ics"
    calendar.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", encoding="utf-8")
    campus = await campus_factory(
        plugins=["catalog"], demo_mode=False, plugin_settings={"catalog": {"calendar_file": str(calendar)}}
    )
    # The programs' and electives' tools have sources of their own (issue 37, point 5).
    assert await listed_tools(campus) >= CATALOG_TOOLS - PROGRAM_TOOLS


PLUGINS = ("catalog", "schedule", "prompts")
PROGRAM_TOOLS = {"list_programs", "degree_requirements", "list_term_electives"}
MODERN = "2026-07-28"


def import_with_the_cli(campus: CampusHarness, folder: Path, *args: str) -> str:
    """``campus-mcp import ARGS`` of this virtualenv in a subprocess, on the campus's database."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "campus-mcp"), "import", *args],
        env={
            "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
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


async def test_tools_and_prompts_appear_when_their_data_does_and_only_then(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37, point 5: an empty campus offers no catalog tool and no prompt that names one (the
    four prompts were listed and sent the model to tools it could not see); sections imported by
    ``campus-mcp import banner`` in another process bring the catalog's tools without a restart, and
    a listening client hears tools/list_changed; the programs' and electives' tools stay away until
    programs and elective lists are loaded."""
    if not TAMU.is_file():
        pytest.skip(f"the Banner fixture is not at {TAMU} (../shared/fixtures of the project root)")
    campus = await campus_factory(plugins=list(PLUGINS), demo_mode=False)
    async with campus.mcp(mode=MODERN) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert not tools & CATALOG_TOOLS and prompts == set()
        with pytest.raises(MCPError, match="Unknown prompt"):
            await client.get_prompt("plan_term_schedule", {})
        unlisted = CATALOG_TOOLS - tools
        assert not [name for name in unlisted if name in campus.instructions()]

        # Another process writes the data: this one asks again every RECHECK_SECONDS (30) while a
        # client listens, or lists with an answer that old; a tenth of a second here.
        monkeypatch.setattr(offers, "RECHECK_SECONDS", 0.1)
        async with client.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
            assert "157 sections in 202131" in import_with_the_cli(campus, tmp_path, "banner", "--file", str(TAMU))
            heard: set[type] = set()
            with anyio.fail_after(10):
                async for event in subscription:
                    heard.add(type(event))
                    if heard >= {ToolsListChanged, PromptsListChanged}:
                        break
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools >= CATALOG_TOOLS - PROGRAM_TOOLS and not tools & PROGRAM_TOOLS
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        # The degree plan names list_programs and degree_requirements: not offered without programs.
        assert prompts == {"plan_term_schedule", "check_my_schedule", "find_class_for_free_time"}
        section = await client.call_tool("get_section", {"crn": "45405", "term": "202131"})
        assert not section.is_error, section.content
        with pytest.raises(MCPError, match="Unknown tool 'list_programs'"):
            await client.call_tool("list_programs", {})
