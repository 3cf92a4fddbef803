"""Campus MCP: a host that gives AI assistants safe access to campus data through plugins.

The names load on first use (PEP 562): ``from campus_mcp import Tool`` imports what ``Tool``
needs and no more, so ``campus-mcp --help`` and ``campus-mcp plugins`` start without the web stack,
the database layer or the MCP SDK (issue 14.7). A type checker reads the imports below; the
table after them says where each name lives at run time, and
tests/cli/test_cli_startup.py holds the two to the same names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from campus_mcp.assembly.calendar_sources import calendar_events_for
    from campus_mcp.assembly.change_bus import change_bus, publish_changes
    from campus_mcp.assembly.deployment import Deployment, open_deployment
    from campus_mcp.assembly.registry import PluginError
    from campus_mcp.base.db import Base, UTCDateTime, utcnow
    from campus_mcp.base.logsafe import escaped
    from campus_mcp.base.lru import LRU
    from campus_mcp.base.mail import MailNotSent, looks_like_address, mask_address, send_mail
    from campus_mcp.base.metrics import count as count_metric
    from campus_mcp.base.metrics import count_import_failures
    from campus_mcp.base.outside_documents import DocumentLimit, DocumentTooLarge, read_document
    from campus_mcp.base.settings import Settings
    from campus_mcp.base.speedups.statement_shapes import ShapedStatements
    from campus_mcp.dashboard.chrome import dashboard_page
    from campus_mcp.jobs.runs import record_run
    from campus_mcp.jobs.scheduler import last_success
    from campus_mcp.limits import RateLimit, RateLimited, check_rate_limit
    from campus_mcp.limits.in_flight import InFlight
    from campus_mcp.oauth.accounts import name_feed_students, student_for_feed
    from campus_mcp.oauth.campus_id import campus_id_problem
    from campus_mcp.oauth.pages import hidden
    from campus_mcp.oauth.secret_once import copy_box, keep_for_one_display, take_for_display
    from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, to_login
    from campus_mcp.plugin.answer_cache import AnswerCache
    from campus_mcp.plugin.campus_time import campus_time_text
    from campus_mcp.plugin.confirmation import (
        Decision,
        NotChanged,
        PlannedChange,
        confirmation_template,
        format_number,
        not_changed,
        plural,
    )
    from campus_mcp.plugin.contributions import (
        AppResource,
        CalendarEvent,
        CalendarSource,
        Completion,
        Connection,
        ConnectionState,
        DataSource,
        DemoData,
        InstructionFragment,
        Migrations,
        OfferCheck,
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
    from campus_mcp.plugin.data_versions import read_versions, version_bump
    from campus_mcp.plugin.errors import (
        CampusError,
        ChangedMeanwhile,
        InvalidInput,
        NotFound,
        PermissionMissing,
    )
    from campus_mcp.plugin.fields import MAX_ROW_ID, RowId
    from campus_mcp.plugin.hookspecs import hookimpl
    from campus_mcp.plugin.job_context import Cron, Interval, Job, JobContext, JobOutcome
    from campus_mcp.plugin.links import PageLink
    from campus_mcp.plugin.operations import Operation, operation_examples, operation_tools
    from campus_mcp.plugin.principal import Principal
    from campus_mcp.plugin.sealed_secrets import SecretUnreadable, open_secret, seal_secret
    from campus_mcp.plugin.settings import PluginSettings
    from campus_mcp.plugin.tool_context import ToolContext
    from campus_mcp.plugin.untrusted import (
        STUDENT_NAME_LENGTH,
        UNNAMED_STUDENT,
        UNTRUSTED_RULE,
        StudentText,
        clean_student_text,
        shown_name,
        student_text,
    )
    from campus_mcp.version import __version__
    from campus_mcp.web.rest_twins import operation_routes

_EXPORTS: dict[str, tuple[str, ...]] = {
    "campus_mcp.assembly.calendar_sources": ("calendar_events_for",),
    "campus_mcp.assembly.change_bus": ("change_bus", "publish_changes"),
    "campus_mcp.assembly.deployment": ("Deployment", "open_deployment"),
    "campus_mcp.assembly.registry": ("PluginError",),
    "campus_mcp.base.db": ("Base", "UTCDateTime", "utcnow"),
    "campus_mcp.base.logsafe": ("escaped",),
    "campus_mcp.base.mail": ("MailNotSent", "looks_like_address", "mask_address", "send_mail"),
    "campus_mcp.base.lru": ("LRU",),
    "campus_mcp.base.metrics": ("count_import_failures", "count_metric"),
    "campus_mcp.base.outside_documents": ("DocumentLimit", "DocumentTooLarge", "read_document"),
    "campus_mcp.base.settings": ("Settings",),
    "campus_mcp.base.speedups.statement_shapes": ("ShapedStatements",),
    "campus_mcp.dashboard.chrome": ("dashboard_page",),
    "campus_mcp.jobs.runs": ("record_run",),
    "campus_mcp.jobs.scheduler": ("last_success",),
    "campus_mcp.limits": ("check_rate_limit", "RateLimit", "RateLimited"),
    "campus_mcp.limits.in_flight": ("InFlight",),
    "campus_mcp.oauth.accounts": ("name_feed_students", "student_for_feed"),
    "campus_mcp.oauth.campus_id": ("campus_id_problem",),
    "campus_mcp.oauth.pages": ("hidden",),
    "campus_mcp.oauth.secret_once": ("copy_box", "keep_for_one_display", "take_for_display"),
    "campus_mcp.oauth.session": ("CSRF_FIELD", "csrf_ok", "csrf_token", "session_user", "to_login"),
    "campus_mcp.plugin.answer_cache": ("AnswerCache",),
    "campus_mcp.plugin.campus_time": ("campus_time_text",),
    "campus_mcp.plugin.confirmation": (
        "confirmation_template",
        "Decision",
        "format_number",
        "not_changed",
        "NotChanged",
        "PlannedChange",
        "plural",
    ),
    "campus_mcp.plugin.contributions": (
        "AppResource",
        "CalendarEvent",
        "CalendarSource",
        "Completion",
        "Connection",
        "ConnectionState",
        "DataSource",
        "DemoData",
        "InstructionFragment",
        "Migrations",
        "OfferCheck",
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
    "campus_mcp.plugin.data_versions": ("read_versions", "version_bump"),
    "campus_mcp.plugin.errors": ("CampusError", "ChangedMeanwhile", "InvalidInput", "NotFound", "PermissionMissing"),
    "campus_mcp.plugin.fields": ("MAX_ROW_ID", "RowId"),
    "campus_mcp.plugin.hookspecs": ("hookimpl",),
    "campus_mcp.plugin.job_context": ("Cron", "Interval", "Job", "JobContext", "JobOutcome"),
    "campus_mcp.plugin.links": ("PageLink",),
    "campus_mcp.plugin.operations": ("Operation", "operation_examples", "operation_tools"),
    "campus_mcp.plugin.principal": ("Principal",),
    "campus_mcp.plugin.sealed_secrets": ("open_secret", "seal_secret", "SecretUnreadable"),
    "campus_mcp.plugin.settings": ("PluginSettings",),
    "campus_mcp.plugin.tool_context": ("ToolContext",),
    "campus_mcp.plugin.untrusted": (
        "clean_student_text",
        "shown_name",
        "STUDENT_NAME_LENGTH",
        "student_text",
        "StudentText",
        "UNNAMED_STUDENT",
        "UNTRUSTED_RULE",
    ),
    "campus_mcp.version": ("__version__",),
    "campus_mcp.web.rest_twins": ("operation_routes",),
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
    "MailNotSent",
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
    "change_bus",
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
    "looks_like_address",
    "mask_address",
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
    "send_mail",
    "session_user",
    "shown_name",
    "student_for_feed",
    "student_text",
    "take_for_display",
    "to_login",
    "utcnow",
    "version_bump",
]
