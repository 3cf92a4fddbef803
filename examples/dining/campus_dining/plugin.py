"""The dining plugin's hook implementations: wiring only, the logic lives beside this module.

Without a dining feed (``[plugins.dining] feed`` in ``campus-mcp.toml`` or ``CAMPUS_MCP_DINING_FEED``,
or the demo feed in demo mode) the plugin
has no data, so it registers no tool, route or job: a tool that can only fail is worse than none.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp import (
    DemoData,
    InstructionFragment,
    Job,
    Migrations,
    PluginInfo,
    RouteGroup,
    Scope,
    Settings,
    Tool,
    ToolExample,
    hookimpl,
)

from campus_dining.demo import load_demo_halls
from campus_dining.examples import EXAMPLES
from campus_dining.jobs import refresh_job
from campus_dining.routes import ROUTES
from campus_dining.settings import DiningSettings, hours_feed
from campus_dining.tools import SCOPE, TOOLS

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="dining",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="Dining hours",
        description="When the campus dining halls and cafés are open.",
        settings_model=DiningSettings,
    )


@hookimpl
def register_scopes() -> list[Scope]:
    # Opening hours are public, so the scope is always on: no consent checkbox, no sign-in needed.
    return [
        Scope(
            name=SCOPE,
            title="See dining hall hours",
            description="See the dining halls' opening hours.",
            always_on=True,
        )
    ]


@hookimpl
def register_tools(settings: Settings, plugin_settings: DiningSettings) -> list[Tool]:
    return TOOLS if hours_feed(settings, plugin_settings) else []


@hookimpl
def register_routes(settings: Settings, plugin_settings: DiningSettings) -> list[RouteGroup]:
    return [RouteGroup(handlers=ROUTES)] if hours_feed(settings, plugin_settings) else []


@hookimpl
def register_jobs(settings: Settings, plugin_settings: DiningSettings) -> list[Job]:
    feed = hours_feed(settings, plugin_settings)
    return [refresh_job(feed)] if feed else []


@hookimpl
def register_instructions(settings: Settings, plugin_settings: DiningSettings) -> list[InstructionFragment]:
    if not hours_feed(settings, plugin_settings):
        return []
    return [
        InstructionFragment(
            priority=40,
            text="When a student asks whether or when a dining hall or café is open, call list_dining_halls first.",
        )
    ]


@hookimpl
def register_migrations() -> list[Migrations]:
    # The tables exist whether or not a feed is configured, so turning the feed on needs no migration.
    return [Migrations(path=Path(__file__).parent / "migrations" / "versions")]


@hookimpl
def register_demo_data() -> list[DemoData]:
    return [DemoData(load=load_demo_halls, order=500)]


@hookimpl
def register_tool_examples(settings: Settings, plugin_settings: DiningSettings) -> list[ToolExample]:
    return EXAMPLES if hours_feed(settings, plugin_settings) else []
