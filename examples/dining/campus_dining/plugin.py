"""Hook implementations of the dining example (filled in by the plugin-author kit work)."""

from __future__ import annotations

from campus_mcp import PluginInfo, Settings, hookimpl


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="dining", version="0.1.0", title="Dining hours", description="When the dining halls are open."
    )
