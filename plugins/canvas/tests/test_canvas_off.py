"""The Canvas family is off until the campus configures its Canvas and the developer key; its settings
say what is wrong with a bad value; the secret is never printed; ``campus-mcp plugins`` lists it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from campus_mcp import PluginError
from campus_mcp.testing import CampusFactory, CampusHarness, cli_main
from click.testing import CliRunner

from .fake_canvas import CLIENT_ID, CLIENT_SECRET

ON_SESSION_LOOP = pytest.mark.asyncio(loop_scope="session")
CANVAS = {"base_url": "https://canvas.example.edu", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}


def offered(campus: CampusHarness) -> dict[str, list[Any]]:
    registry = campus.registry
    return {
        "tools": [t for t in registry.tools.values() if t.plugin == "canvas"],
        "scopes": [s for s in registry.scopes.values() if s.plugin == "canvas"],
        "prompts": [p for p in registry.prompts.values() if p.plugin == "canvas"],
        "routes": [g for g in registry.route_groups if g.plugin == "canvas"],
        "connections": [c for c in registry.connections if c.plugin == "canvas"],
        "feed": [c for c in registry.calendar_sources if c.plugin == "canvas"],
    }


@ON_SESSION_LOOP
async def test_off_until_the_campus_gives_its_canvas_and_the_developer_key(campus_factory: CampusFactory) -> None:
    production = {"demo_mode": False, "secret_key": "k" * 48}
    nothing = await campus_factory(plugins=["canvas"], **production)
    assert offered(nothing) == {k: [] for k in ("tools", "scopes", "prompts", "routes", "connections", "feed")}
    half = await campus_factory(
        plugins=["canvas"], plugin_settings={"canvas": CANVAS | {"client_secret": ""}}, **production
    )
    assert offered(half)["tools"] == [] and offered(half)["scopes"] == []
    configured = await campus_factory(plugins=["canvas"], plugin_settings={"canvas": CANVAS}, **production)
    on = offered(configured)
    assert sorted(t.name for t in on["tools"]) == [
        "canvas_announcements",
        "canvas_course_assignments",
        "canvas_due_work",
        "canvas_grades",
        "canvas_missing_work",
    ]
    [scope] = on["scopes"]
    assert scope.name == "canvas:read" and scope.starts_checked and not scope.writes and not scope.always_on
    assert [p.name for p in on["prompts"]] == ["plan_my_week"] and on["connections"] and on["feed"]
    assert all(t.scope == "canvas:read" and not t.writes and t.open_world for t in on["tools"])
    # Every tool with its REST twin: the parity check finds nothing to fix in the family.
    assert configured.check_parity("canvas").ok
    # Demo mode without a Canvas: the demo Canvas inside the process.
    demo = await campus_factory(plugins=["canvas"])
    assert len(offered(demo)["tools"]) == 5


@ON_SESSION_LOOP
async def test_a_bad_setting_is_named_with_what_to_do(campus_factory: CampusFactory) -> None:
    for url, words in (
        ("http://canvas.example.edu", "https address"),
        ("https://canvas.example.edu/courses", "no path"),
        ("ftp://canvas.example.edu", "https address"),
    ):
        with pytest.raises(PluginError) as refused:
            await campus_factory(plugins=["canvas"], plugin_settings={"canvas": CANVAS | {"base_url": url}})
        assert "base_url" in str(refused.value) and words in str(refused.value)
    with pytest.raises(PluginError, match="max_pages"):
        await campus_factory(plugins=["canvas"], plugin_settings={"canvas": CANVAS | {"max_pages": 500}})


def test_campus_mcp_plugins_lists_the_family_and_never_prints_the_secret() -> None:
    env = {f"CAMPUS_MCP_CANVAS_{key.upper()}": value for key, value in CANVAS.items()}
    listed = CliRunner().invoke(cli_main, ["plugins"], env=env)
    assert listed.exit_code == 0, listed.output
    [canvas] = [p for p in json.loads(listed.output) if p["name"] == "canvas"]
    assert canvas["distribution"] == "campus-mcp-canvas" and canvas["enabled"] is True
    loaded = CliRunner().invoke(cli_main, ["plugins", "--contributions"], env=env | {"CAMPUS_MCP_DEMO": "true"})
    assert loaded.exit_code == 0, loaded.output
    [contributions] = [p for p in json.loads(loaded.output) if p["name"] == "canvas"]
    assert "canvas_due_work" in contributions["tools"] and "GET /dashboard/canvas/callback" in contributions["routes"]
    assert CLIENT_SECRET not in loaded.output + listed.output
