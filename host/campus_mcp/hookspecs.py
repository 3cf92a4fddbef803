"""Every hook a Campus MCP plugin can implement.

One hook per kind of contribution. Each returns a list of the contribution objects exported
from ``campus_mcp`` (``campus_plugin_info`` returns one). Every hook may take ``settings``,
the deployment's :class:`campus_mcp.Settings`, and every hook but ``campus_plugin_info`` (which
declares the model) may take ``plugin_settings``, the plugin's own settings object (its
``PluginInfo.settings_model`` loaded, or None), so that a plugin whose upstream source is not
configured can leave out the tools and jobs that could only fail.

``docs/hooks.md`` documents each hook under its exact signature; ``tests/test_docs.py`` fails
when the two drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from campus_mcp.contributions import (
        AppResource,
        CalendarSource,
        Completion,
        Connection,
        DataSource,
        DemoData,
        InstructionFragment,
        Job,
        Migrations,
        PluginInfo,
        Prompt,
        ResourceTemplate,
        RouteGroup,
        Scope,
        StudentData,
        Tool,
        ToolExample,
    )
    from campus_mcp.plugin_settings import PluginSettings
    from campus_mcp.settings import Settings

PROJECT = "campus_mcp"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def campus_plugin_info(settings: Settings) -> PluginInfo:  # type: ignore[empty-body]
    """Return the plugin's name, version, title, description and the plugins it needs."""


@hookspec
def register_scopes(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Scope]:  # type: ignore[empty-body]
    """Return the OAuth scopes the plugin's tools need."""


@hookspec
def register_tools(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Tool]:  # type: ignore[empty-body]
    """Return the plugin's MCP tools."""


@hookspec
def register_routes(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[RouteGroup]:  # type: ignore[empty-body]
    """Return the plugin's REST routes and web pages, with parity exemptions and pending routes."""


@hookspec
def register_prompts(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Prompt]:  # type: ignore[empty-body]
    """Return the plugin's MCP prompts."""


@hookspec
def register_completions(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Completion]:  # type: ignore[empty-body]
    """Return completers for prompt arguments, keyed by argument name."""


@hookspec
def register_app_resources(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[AppResource]:  # type: ignore[empty-body]
    """Return the plugin's MCP Apps (``ui://``) templates."""


@hookspec
def register_resources(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[ResourceTemplate]:  # type: ignore[empty-body]
    """Return the plugin's ``campus://`` resource templates, each the answer of one read tool."""


@hookspec
def register_jobs(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Job]:  # type: ignore[empty-body]
    """Return the plugin's scheduled jobs."""


@hookspec
def register_data_sources(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[DataSource]:  # type: ignore[empty-body]
    """Return the data sources the advisory of the plugin's tools names."""


@hookspec
def register_instructions(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[InstructionFragment]:  # type: ignore[empty-body]
    """Return fragments of the server instructions; triggers get a low priority number."""


@hookspec
def register_migrations(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Migrations]:  # type: ignore[empty-body]
    """Return the plugin's Alembic version folder."""


@hookspec
def register_demo_data(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[DemoData]:  # type: ignore[empty-body]
    """Return loaders that fill the plugin's tables for the demo campus."""


@hookspec
def register_tool_examples(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[ToolExample]:  # type: ignore[empty-body]
    """Return example calls of the plugin's tools for the contract tests (demo and sparse data)."""


@hookspec
def register_commands(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Any]:  # type: ignore[empty-body]
    """Return click commands or groups to add to the ``campus-mcp`` command line."""


@hookspec
def register_connections(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[Connection]:  # type: ignore[empty-body]
    """Return what else reads a student's data (a calendar feed), listed with the connected apps."""


@hookspec
def register_student_data(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[StudentData]:  # type: ignore[empty-body]
    """Return what the plugin holds about one student, for the student's export."""


@hookspec
def register_calendar_events(settings: Settings, plugin_settings: PluginSettings | None) -> Sequence[CalendarSource]:  # type: ignore[empty-body]
    """Return sources of events for the student's calendar feed (due dates from their LMS)."""
