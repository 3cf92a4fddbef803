"""Hook implementations of the prompts family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from pathlib import Path

from campus_mcp import PluginInfo, Prompt, Settings, hookimpl

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="prompts",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="Planning prompts",
        description="Prompts that plan a term, check a schedule, plan a degree and find a class for free time, with completions.",
        # The prompts name the catalog's and the schedule's tools, and complete with the catalog's completers.
        depends_on=("catalog", "schedule"),
    )


@hookimpl
def register_prompts(settings: Settings) -> list[Prompt]:
    from campus_prompts.prompts import planning_prompts

    return planning_prompts(settings)
