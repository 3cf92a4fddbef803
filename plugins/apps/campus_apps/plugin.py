"""Hook implementations of the apps family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from campus_mcp import PluginInfo, Settings, hookimpl

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="apps",
        version=__version__,
        title="Interactive views",
        description="MCP Apps pages that draw tool results: week grid, busy times, catalog and finals.",
        depends_on=("catalog",),
    )
