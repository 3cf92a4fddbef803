"""Campus MCP: a host that gives AI assistants safe access to campus data through plugins.

The names load on first use (PEP 562): ``from campus_mcp import Tool`` imports what ``Tool``
needs and no more, so ``campus-mcp --help`` and ``campus-mcp plugins`` start without the web stack,
the database layer or the MCP SDK (issue 14.7). A type checker reads the imports below; the
table after them says where each name lives at run time, and
tests/test_cli_startup.py holds the two to the same names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from campus_mcp.accounts import name_feed_students, student_for_feed
    from campus_mcp.answer_cache import AnswerCache
    from campus_mcp.calendar_sources import calendar_events_for
    from campus_mcp.campus_time import campus_time_text
    from campus_mcp.change_bus import publish_changes
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
        CalendarEvent,
        CalendarSource,
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
        OfferCheck,
        PageLink,
        PluginInfo,
        Prompt,
        PromptArgument,
        ResourceTemplate,
        RouteGroup,
        RouteRef,
        Scope,
        StudentData,
        Tool,
        ToolExample,
    )
    from campus_mcp.data_versions import read_versions, version_bump
    from campus_mcp.db import Base, UTCDateTime, utcnow
    from campus_mcp.deployment import Deployment, open_deployment
    from campus_mcp.errors import CampusError, ChangedMeanwhile, InvalidInput, NotFound, PermissionMissing
    from campus_mcp.fields import MAX_ROW_ID, RowId
    from campus_mcp.hookspecs import hookimpl
    from campus_mcp.job_context import JobContext
    from campus_mcp.jobs import last_success
    from campus_mcp.limits import RateLimit, RateLimited, check_rate_limit
    from campus_mcp.limits.in_flight import InFlight
    from campus_mcp.logsafe import escaped
    from campus_mcp.lru import LRU
    from campus_mcp.metrics import count as count_metric
    from campus_mcp.metrics import count_import_failures
    from campus_mcp.oauth.campus_id import campus_id_problem
    from campus_mcp.oauth.pages import hidden
    from campus_mcp.oauth.secret_once import copy_box, keep_for_one_display, take_for_display
    from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, to_login
    from campus_mcp.operations import Operation, operation_examples, operation_routes, operation_tools
    from campus_mcp.outside_documents import DocumentLimit, DocumentTooLarge, read_document
    from campus_mcp.plugin_settings import PluginSettings
    from campus_mcp.principal import Principal
    from campus_mcp.registry import PluginError
    from campus_mcp.runs import record_run
    from campus_mcp.sealed_secrets import SecretUnreadable, open_secret, seal_secret
    from campus_mcp.settings import Settings
    from campus_mcp.speedups.statement_shapes import ShapedStatements
    from campus_mcp.tool_context import ToolContext
    from campus_mcp.untrusted import (
        STUDENT_NAME_LENGTH,
        UNNAMED_STUDENT,
        UNTRUSTED_RULE,
        StudentText,
        clean_student_text,
        shown_name,
        student_text,
    )
    from campus_mcp.version import __version__
    from campus_mcp.web import dashboard_page

_EXPORTS: dict[str, tuple[str, ...]] = {
    "campus_mcp.accounts": ("name_feed_students", "student_for_feed"),
    "campus_mcp.answer_cache": ("AnswerCache",),
    "campus_mcp.calendar_sources": ("calendar_events_for",),
    "campus_mcp.campus_time": ("campus_time_text",),
    "campus_mcp.change_bus": ("publish_changes",),
    "campus_mcp.confirmation": (
        "Decision",
        "NotChanged",
        "PlannedChange",
        "confirmation_template",
        "format_number",
        "not_changed",
        "plural",
    ),
    "campus_mcp.contributions": (
        "AppResource",
        "CalendarEvent",
        "CalendarSource",
        "Completion",
        "Connection",
        "ConnectionState",
        "Cron",
        "DataSource",
        "DemoData",
        "InstructionFragment",
        "Interval",
        "Job",
        "JobOutcome",
        "Migrations",
        "OfferCheck",
        "PageLink",
        "PluginInfo",
        "Prompt",
        "PromptArgument",
        "ResourceTemplate",
        "RouteGroup",
        "RouteRef",
        "Scope",
        "StudentData",
        "Tool",
        "ToolExample",
    ),
    "campus_mcp.db": ("Base", "UTCDateTime", "utcnow"),
    "campus_mcp.data_versions": ("read_versions", "version_bump"),
    "campus_mcp.deployment": ("Deployment", "open_deployment"),
    "campus_mcp.errors": ("CampusError", "ChangedMeanwhile", "InvalidInput", "NotFound", "PermissionMissing"),
    "campus_mcp.fields": ("MAX_ROW_ID", "RowId"),
    "campus_mcp.hookspecs": ("hookimpl",),
    "campus_mcp.job_context": ("JobContext",),
    "campus_mcp.jobs": ("last_success",),
    "campus_mcp.limits": ("RateLimit", "RateLimited", "check_rate_limit"),
    "campus_mcp.limits.in_flight": ("InFlight",),
    "campus_mcp.logsafe": ("escaped",),
    "campus_mcp.lru": ("LRU",),
    "campus_mcp.metrics": ("count_metric", "count_import_failures"),
    "campus_mcp.oauth.campus_id": ("campus_id_problem",),
    "campus_mcp.oauth.pages": ("hidden",),
    "campus_mcp.oauth.secret_once": ("copy_box", "keep_for_one_display", "take_for_display"),
    "campus_mcp.oauth.session": ("CSRF_FIELD", "csrf_ok", "csrf_token", "session_user", "to_login"),
    "campus_mcp.operations": ("Operation", "operation_examples", "operation_routes", "operation_tools"),
    "campus_mcp.outside_documents": ("DocumentLimit", "DocumentTooLarge", "read_document"),
    "campus_mcp.plugin_settings": ("PluginSettings",),
    "campus_mcp.principal": ("Principal",),
    "campus_mcp.registry": ("PluginError",),
    "campus_mcp.runs": ("record_run",),
    "campus_mcp.sealed_secrets": ("SecretUnreadable", "open_secret", "seal_secret"),
    "campus_mcp.settings": ("Settings",),
    "campus_mcp.speedups.statement_shapes": ("ShapedStatements",),
    "campus_mcp.untrusted": (
        "STUDENT_NAME_LENGTH",
        "UNNAMED_STUDENT",
        "UNTRUSTED_RULE",
        "StudentText",
        "clean_student_text",
        "shown_name",
        "student_text",
    ),
    "campus_mcp.tool_context": ("ToolContext",),
    "campus_mcp.version": ("__version__",),
    "campus_mcp.web": ("dashboard_page",),
}
# A name that is not the attribute's own.
_RENAMED: dict[str, str] = {"count_metric": "count"}
_WHERE: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'campus_mcp' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # once loaded, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "CSRF_FIELD",
    "LRU",
    "MAX_ROW_ID",
    "STUDENT_NAME_LENGTH",
    "UNNAMED_STUDENT",
    "UNTRUSTED_RULE",
    "AnswerCache",
    "AppResource",
    "Base",
    "CalendarEvent",
    "CalendarSource",
    "CampusError",
    "ChangedMeanwhile",
    "Completion",
    "Connection",
    "ConnectionState",
    "Cron",
    "DataSource",
    "Decision",
    "DemoData",
    "Deployment",
    "DocumentLimit",
    "DocumentTooLarge",
    "InFlight",
    "InstructionFragment",
    "Interval",
    "InvalidInput",
    "Job",
    "JobContext",
    "JobOutcome",
    "Migrations",
    "NotChanged",
    "NotFound",
    "OfferCheck",
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
    "ResourceTemplate",
    "RouteGroup",
    "RouteRef",
    "RowId",
    "Scope",
    "SecretUnreadable",
    "Settings",
    "ShapedStatements",
    "StudentData",
    "StudentText",
    "Tool",
    "ToolContext",
    "ToolExample",
    "UTCDateTime",
    "__version__",
    "calendar_events_for",
    "campus_id_problem",
    "campus_time_text",
    "check_rate_limit",
    "clean_student_text",
    "confirmation_template",
    "copy_box",
    "count_import_failures",
    "count_metric",
    "csrf_ok",
    "csrf_token",
    "dashboard_page",
    "escaped",
    "format_number",
    "hidden",
    "hookimpl",
    "keep_for_one_display",
    "last_success",
    "name_feed_students",
    "not_changed",
    "open_deployment",
    "open_secret",
    "operation_examples",
    "operation_routes",
    "operation_tools",
    "plural",
    "publish_changes",
    "read_document",
    "read_versions",
    "record_run",
    "seal_secret",
    "session_user",
    "shown_name",
    "student_for_feed",
    "student_text",
    "take_for_display",
    "to_login",
    "utcnow",
    "version_bump",
]
