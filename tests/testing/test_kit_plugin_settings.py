"""The kit's ``campus_factory`` gives a test campus plugin settings: ``plugin_settings={name: {...}}``.

Without it a test could only set a plugin's settings through the environment or a TOML file. The
values go through the same loading and checks as ``[plugins.<name>]`` values do at start-up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campus_mcp import PluginError
from campus_mcp.testing import CampusFactory


def write_feed(folder: Path) -> Path:
    feed = folder / "hours.json"
    hall = {
        "slug": "annex-grill",
        "name": "Annex Grill",
        "hours": [{"day": "monday", "opens": "11:00", "closes": "15:00"}],
    }
    feed.write_text(json.dumps({"halls": [hall]}))
    return feed


async def test_a_campus_gets_the_plugin_settings_it_is_given(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAMPUS_MCP_DINING_FEED", raising=False)
    feed = write_feed(tmp_path)
    # Outside demo mode the dining plugin has tools only with a feed: these come from the setting.
    campus = await campus_factory(plugins=["dining"], demo_mode=False, plugin_settings={"dining": {"feed": str(feed)}})
    await campus.run_job("dining.refresh_hours")
    result = await campus.call("list_dining_halls", {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert [hall["name"] for hall in result.structured_content["halls"]] == ["Annex Grill"]
    assert campus.registry.plugin_settings["dining"].feed == feed


async def test_a_misspelt_plugin_setting_is_refused_naming_it(campus_factory: CampusFactory) -> None:
    with pytest.raises(PluginError, match="feeds"):
        await campus_factory(plugins=["dining"], plugin_settings={"dining": {"feeds": "hours.json"}})
