"""Hook implementations of the apps family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from pathlib import Path

from campus_mcp import AppResource, PluginInfo, Settings, hookimpl

from campus_apps.views import app_resources

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="apps",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="Interactive views",
        description="MCP Apps pages that draw tool results: week grid, busy times, catalog and finals.",
        depends_on=("catalog",),
    )


@hookimpl
def register_app_resources() -> list[AppResource]:
    # Each view names the tools it draws; the registry links the enabled ones (docs/hooks.md).
    return app_resources()
