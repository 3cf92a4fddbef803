"""The settings operations, each declared once: the MCP tool and its REST twin are made from it
(``campus_mcp.Operation``). The three write tools give a ``plan``, so the host asks the student to
confirm in the client before the change (seed 000 "Confirmation"); the two DELETE twins are the
same tools resetting every field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from campus_mcp import Operation, PageLink, RouteRef, Settings, Tool, ToolContext, operation_tools

from campus_settings import service
from campus_settings.examples import examples_of
from campus_settings.schemas import (
    ClassSettingsAnswer,
    ClassSettingsChange,
    ClassSettingsPath,
    LevelPath,
    LevelSettingsAnswer,
    LevelSettingsChange,
    MyCalendarSettings,
    NotificationsAnswer,
    NotificationsChange,
    PreviewAnswer,
    PreviewRequest,
    SettingsQuery,
)

READ = "settings:read"
WRITE = "settings:write"
NOTIFICATIONS = "notifications:write"
API = "/api/v1/me/calendar-settings"
CLASS_PATH = f"{API}/classes/{{meeting_time_id}}"
LEVEL_PATH = f"{API}/{{level}}"
NOTIFICATIONS_PATH = "/api/v1/me/notifications"
SETTINGS_PAGE = "/dashboard/calendar-settings"
NOTIFICATIONS_PAGE = "/dashboard/notifications"
# How the student confirms the change (which depends on the client) the host adds to every write
# tool's description (campus_mcp.mcp.server.CONFIRMATION_WORDS).


def _words(text: str) -> Callable[[Settings, Any], str]:
    return lambda settings, _plugin: text.format(campus=settings.campus_name, short=settings.campus_short_name)


async def settings_page_link(context: ToolContext, result: Mapping[str, Any]) -> Sequence[PageLink]:
    # Seed 000 "Page links": the settings pages skip onboarding, so every student gets the link.
    return [
        PageLink(
            name="calendar-settings",
            title=f"Calendar settings on {context.settings.product_name}",
            url=f"{context.settings.base_url}{SETTINGS_PAGE}",
            description="Every level of your calendar settings, with a preview of a template.",
        )
    ]


async def notifications_page_link(context: ToolContext, result: Mapping[str, Any]) -> Sequence[PageLink]:
    return [
        PageLink(
            name="notification-settings",
            title=f"Notification settings on {context.settings.product_name}",
            url=f"{context.settings.base_url}{NOTIFICATIONS_PAGE}",
            description="Pause your reminders or turn them on again.",
        )
    ]


OPERATIONS = [
    Operation(
        name="my_calendar_settings",
        title="My calendar settings",
        description=_words(
            "The signed-in {short} student's calendar event settings: the levels (all classes, a kind of class, "
            "final exams, university events) and class meetings with settings of their own, each with the value "
            "that applies and where it comes from, and whether reminders are paused. On request: every_level, "
            "colors (the color names), template_variables. Use it "
            "for: 'What color are my lab events?', 'What are my reminders?', 'How are my class events titled?', "
            "before changing a setting. Needs settings:read."
        ),
        scope=READ,
        input_model=SettingsQuery,
        output_model=MyCalendarSettings,
        run=service.run_my_calendar_settings,
        method="GET",
        path=API,
        page_links=settings_page_link,
        examples=examples_of("my_calendar_settings"),
    ),
    Operation(
        name="preview_template",
        title="Preview a template",
        description=_words(
            "What an event title, description or location template gives for one of the {short} "
            "student's class meetings, without saving it. A template is text with {{{{name}}}} placeholders "
            "from the list my_calendar_settings gives, such as '{{{{course_code}}}} in {{{{room}}}}'. Use it for: "
            "'What would my class titles look like with the room in them?'. meeting_time_id from my_courses; "
            "default your first class meeting this term. Needs settings:read."
        ),
        scope=READ,
        input_model=PreviewRequest,
        output_model=PreviewAnswer,
        run=service.run_preview_template,
        method="POST",
        path=f"{API}/preview",
        examples=examples_of("preview_template"),
    ),
    Operation(
        name="update_class_settings",
        title="Change a class's settings",
        description=_words(
            "Changes the calendar event title, description or location template, color, visibility or reminders "
            "of ONE weekly class meeting of the {short} student (a class setting). Use it for: 'Make my "
            "Thursday chem lab green', 'No reminders for my Friday seminar'. meeting_time_id from my_courses: a "
            "course meeting Monday and Wednesday has two, so change each. Only the fields given change; reset "
            "lists fields to remove (the level below applies again), and the row goes when none is left. "
            "An empty template is not set; reminders: [] means no reminders. Colors: a name (sage, basil, "
            "tomato, ...), an id 1-11 or '#rrggbb'; reminders as {{'minutes': 10}} or {{'hours': 1}}. "
            "Needs settings:write."
        ),
        scope=WRITE,
        input_model=ClassSettingsChange,
        output_model=ClassSettingsAnswer,
        run=service.run_update_class_settings,
        plan=service.plan_class_settings,
        writes=True,
        idempotent=True,
        method="PATCH",
        path=CLASS_PATH,
        examples=examples_of("update_class_settings"),
    ),
    Operation(
        name="update_calendar_settings",
        title="Change calendar settings",
        description=_words(
            "Changes the calendar event settings (title, description and location templates, color, "
            "visibility, reminders) of a whole level for the {short} student: all_classes, one kind "
            "of class (lecture, laboratory, ...), final_exam, university_events, or "
            "university_events:<category>. Use it for: 'Make my lab events green', 'Change my reminders to 30 "
            "minutes', 'Put the room in my class titles'. A class meeting or a kind of class with settings of "
            "its own keeps them; a new university_events color removes the categories' colors; the answer's note "
            "says when no class of the student's has that kind. Only the fields "
            "given change; reset removes fields. Needs settings:write."
        ),
        scope=WRITE,
        input_model=LevelSettingsChange,
        output_model=LevelSettingsAnswer,
        run=service.run_update_calendar_settings,
        plan=service.plan_calendar_settings,
        writes=True,
        idempotent=True,
        method="PATCH",
        path=LEVEL_PATH,
        page_links=settings_page_link,
        examples=examples_of("update_calendar_settings"),
    ),
    Operation(
        name="set_notifications",
        title="Pause or resume reminders",
        description=_words(
            "Pauses or resumes every reminder of the {short} student's calendar sync (also those of "
            "class settings). Use it for: 'Stop my reminders for finals week', 'Pause my notifications for 2 "
            "hours', 'Pause my reminders until Monday', 'Turn my reminders back on'. paused: true or false; a "
            "length in minutes or hours (whole minutes, at least one), or until: a date and time in campus time, "
            "a date or a weekday as the student said it (no arithmetic); else until turned on. "
            "Needs notifications:write."
        ),
        scope=NOTIFICATIONS,
        input_model=NotificationsChange,
        output_model=NotificationsAnswer,
        run=service.run_set_notifications,
        plan=service.plan_notifications,
        writes=True,
        idempotent=True,
        method="PATCH",
        path=NOTIFICATIONS_PATH,
        page_links=notifications_page_link,
        examples=examples_of("set_notifications"),
    ),
]

# DELETE .../classes/{id} and DELETE .../{level}: the same tools, resetting every field.
DELETE_OPERATIONS = [
    # Their own titles: the OpenAPI document's summary of each route (a reset, not a change).
    dataclasses.replace(
        OPERATIONS[2],
        method="DELETE",
        title="Reset a class's settings",
        input_model=ClassSettingsPath,
        examples=(),
        page_links=None,
    ),
    dataclasses.replace(
        OPERATIONS[3],
        method="DELETE",
        title="Reset calendar settings",
        input_model=LevelPath,
        examples=(),
        page_links=None,
    ),
]


def settings_tools(settings: Settings) -> list[Tool]:
    tools = operation_tools(OPERATIONS, settings=settings)
    extra = {op.name: RouteRef(method="DELETE", path=op.path or "") for op in DELETE_OPERATIONS}
    return [
        dataclasses.replace(tool, mirrors=(*tool.mirrors, extra[tool.name])) if tool.name in extra else tool
        for tool in tools
    ]
