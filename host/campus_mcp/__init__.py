"""Campus MCP: a host that gives AI assistants safe access to campus data through plugins."""

from campus_mcp.contributions import (
    AppResource,
    Completion,
    Cron,
    DataSource,
    DemoData,
    InstructionFragment,
    Interval,
    Job,
    JobOutcome,
    Migrations,
    PageLink,
    PluginInfo,
    Prompt,
    PromptArgument,
    RouteGroup,
    RouteRef,
    Scope,
    Tool,
    ToolExample,
)
from campus_mcp.errors import CampusError, InvalidInput, NotFound, PermissionMissing
from campus_mcp.hookspecs import hookimpl
from campus_mcp.principal import Principal
from campus_mcp.settings import Settings
from campus_mcp.tool_context import ToolContext
from campus_mcp.version import __version__

__all__ = [
    "AppResource",
    "CampusError",
    "Completion",
    "Cron",
    "DataSource",
    "DemoData",
    "InstructionFragment",
    "Interval",
    "InvalidInput",
    "Job",
    "JobOutcome",
    "Migrations",
    "NotFound",
    "PageLink",
    "PermissionMissing",
    "PluginInfo",
    "Principal",
    "Prompt",
    "PromptArgument",
    "RouteGroup",
    "RouteRef",
    "Scope",
    "Settings",
    "Tool",
    "ToolContext",
    "ToolExample",
    "__version__",
    "hookimpl",
]
