"""Campus MCP: a host that gives AI assistants safe access to campus data through plugins."""

from campus_mcp.confirmation import (
    Decision,
    NotChanged,
    PlannedChange,
    confirmation_template,
    format_number,
    not_changed,
    plural,
)
from campus_mcp.contributions import (
    AppResource,
    Completion,
    Connection,
    ConnectionState,
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
from campus_mcp.db import Base, UTCDateTime, utcnow
from campus_mcp.deployment import Deployment, open_deployment
from campus_mcp.errors import CampusError, InvalidInput, NotFound, PermissionMissing
from campus_mcp.fields import MAX_ROW_ID, RowId
from campus_mcp.hookspecs import hookimpl
from campus_mcp.job_context import JobContext
from campus_mcp.jobs import last_success
from campus_mcp.limits import RateLimit, RateLimited, check_rate_limit
from campus_mcp.logsafe import escaped
from campus_mcp.metrics import count as count_metric
from campus_mcp.metrics import count_import_failures
from campus_mcp.oauth.pages import hidden
from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, to_login
from campus_mcp.operations import Operation, operation_examples, operation_routes, operation_tools
from campus_mcp.plugin_settings import PluginSettings
from campus_mcp.principal import Principal
from campus_mcp.registry import PluginError
from campus_mcp.runs import record_run
from campus_mcp.settings import Settings
from campus_mcp.tool_context import ToolContext
from campus_mcp.version import __version__
from campus_mcp.web import dashboard_page

__all__ = [
    "CSRF_FIELD",
    "MAX_ROW_ID",
    "AppResource",
    "Base",
    "CampusError",
    "Completion",
    "Connection",
    "ConnectionState",
    "Cron",
    "DataSource",
    "Decision",
    "DemoData",
    "Deployment",
    "InstructionFragment",
    "Interval",
    "InvalidInput",
    "Job",
    "JobContext",
    "JobOutcome",
    "Migrations",
    "NotChanged",
    "NotFound",
    "Operation",
    "PageLink",
    "PermissionMissing",
    "PlannedChange",
    "PluginError",
    "PluginInfo",
    "PluginSettings",
    "Principal",
    "Prompt",
    "PromptArgument",
    "RateLimit",
    "RateLimited",
    "RouteGroup",
    "RouteRef",
    "RowId",
    "Scope",
    "Settings",
    "Tool",
    "ToolContext",
    "ToolExample",
    "UTCDateTime",
    "__version__",
    "check_rate_limit",
    "confirmation_template",
    "count_import_failures",
    "count_metric",
    "csrf_ok",
    "csrf_token",
    "dashboard_page",
    "escaped",
    "format_number",
    "hidden",
    "hookimpl",
    "last_success",
    "not_changed",
    "open_deployment",
    "operation_examples",
    "operation_routes",
    "operation_tools",
    "plural",
    "record_run",
    "session_user",
    "to_login",
    "utcnow",
]
