"""The dining plugin's own setting: where the hours feed is.

A plugin's settings are a :class:`campus_mcp.PluginSettings` model named in
``PluginInfo(settings_model=...)``. The host fills it from the ``[plugins.dining]`` table of
``campus-mcp.toml`` and from ``CAMPUS_MCP_DINING_<KEY>`` (the environment wins), stops start-up on a
bad value, and hands the one object to every hook that asks for ``plugin_settings``; the plugin
never reads the environment itself.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp import PluginSettings, Settings
from pydantic import Field

DEMO_FEED = Path(__file__).parent / "demo_feed.json"


class DiningSettings(PluginSettings):
    feed: Path | None = Field(
        default=None, description="A JSON file with the dining halls and their weekly hours (see demo_feed.json)."
    )


def hours_feed(settings: Settings, plugin_settings: DiningSettings) -> Path | None:
    """The feed the hours come from; the packaged demo feed in demo mode; None when there is none.

    None means the plugin has no data, so it registers no tool, route or job (DESIGN section 3).
    """
    if plugin_settings.feed is not None:  # [plugins.dining] feed, or CAMPUS_MCP_DINING_FEED
        return plugin_settings.feed
    return DEMO_FEED if settings.demo else None
