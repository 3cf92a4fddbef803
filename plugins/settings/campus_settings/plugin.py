"""Hook implementations of the settings family. Wiring only: the logic lives beside this module.

The student's calendar event settings (seed 000 "Class settings"): five tools with their REST
twins under ``/api/v1/me``, the Calendar settings and Notifications pages, demo settings.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp import (
    Connection,
    DemoData,
    InstructionFragment,
    Migrations,
    PluginInfo,
    RouteGroup,
    Scope,
    Settings,
    StudentData,
    Tool,
    ToolExample,
    hookimpl,
    operation_examples,
)

from campus_settings import models as _models  # noqa: F401  (the tables join the metadata)
from campus_settings.feed import tokens as _feed_tokens  # noqa: F401  (the calendar feed's table)

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="settings",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="Calendar settings",
        description="The student's calendar event settings and reminders, changed only with the student's confirmation.",
        depends_on=("schedule",),
    )


@hookimpl
def register_scopes() -> list[Scope]:
    from campus_settings.tools import NOTIFICATIONS, READ, WRITE

    return [
        Scope(
            name=READ,
            title="See your calendar settings",
            description="Read your calendar event settings and preview a template.",
            starts_checked=True,
        ),
        Scope(
            name=WRITE,
            title="Change your calendar settings",
            description="Change the titles, colors, visibility and reminders of your calendar events, after you confirm.",
            writes=True,
            starts_checked=False,
        ),
        Scope(
            name=NOTIFICATIONS,
            title="Pause or resume your reminders",
            description="Pause your reminders or turn them on again, after you confirm.",
            writes=True,
            starts_checked=False,
        ),
    ]


@hookimpl
def register_tools(settings: Settings) -> list[Tool]:
    from campus_settings.tools import settings_tools

    return settings_tools(settings)


@hookimpl
def register_routes() -> list[RouteGroup]:
    from campus_settings.feed.redact import install_access_log_filter
    from campus_settings.feed.routes import FEED_ROUTES
    from campus_settings.pages import PAGES
    from campus_settings.routes import ROUTES

    # The feed's URL is its secret: uvicorn's access log must not print it (feed/redact.py).
    install_access_log_filter()
    return [RouteGroup(handlers=[*ROUTES, *PAGES, *FEED_ROUTES])]


@hookimpl
def register_connections() -> list[Connection]:
    from campus_settings.feed.connection import CALENDAR_FEED

    # The feed reads the student's calendar, so Settings lists it with the connected apps.
    return [CALENDAR_FEED]


@hookimpl
def register_instructions(settings: Settings) -> list[InstructionFragment]:
    return [
        InstructionFragment(
            priority=40,
            text=(
                "When a student wants to change how classes show in their calendar ('make my labs green', "
                "'pause notifications'), call my_calendar_settings first."
            ),
        )
    ]


@hookimpl
def register_tool_examples() -> list[ToolExample]:
    from campus_settings.tools import OPERATIONS

    return operation_examples(OPERATIONS)


@hookimpl
def register_migrations() -> list[Migrations]:
    return [Migrations(path=Path(__file__).parent / "migrations")]


@hookimpl
def register_demo_data() -> list[DemoData]:
    from campus_settings.demo import load_demo_settings

    # After the schedules (order 20): the class setting points at a demo meeting.
    return [DemoData(load=load_demo_settings, order=30)]


@hookimpl
def register_student_data() -> list[StudentData]:
    from campus_settings.export import STUDENT_DATA

    return list(STUDENT_DATA)
