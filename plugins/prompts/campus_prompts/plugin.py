"""Hook implementations of the prompts family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from campus_mcp import PluginInfo, Settings, hookimpl

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="prompts",
        version=__version__,
        title="Planning prompts",
        description="Prompts that plan a term, check a schedule, plan a degree and find a class for free time, with completions.",
        depends_on=("catalog",),
    )
