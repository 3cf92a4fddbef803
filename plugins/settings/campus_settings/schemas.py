"""The settings family's arguments and answers, shared by the MCP tools and the REST routes.

The arguments of a change carry only what the student gives: a field left out is not changed
(seed 000: only the fields in a call change). ``reset`` names the fields to remove, so the level
below applies again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from campus_catalog.api import Answer, Arguments
from campus_mcp import NotChanged, RowId
from pydantic import Field, model_validator

SettingName = Literal["title_template", "description_template", "location_template", "color", "visibility", "reminders"]
Visibility = Literal["default", "public", "private"]
# Google Calendar's limits: at most 5 reminders, at most 4 weeks before the event.
MAX_REMINDERS = 5
MAX_REMINDER_MINUTES = 40320
TEMPLATE_HELP = "Plain text with {{name}} placeholders (my_calendar_settings lists them); empty: not set."

# --- arguments ------------------------------------------------------------------------------


class Reminder(Arguments):
    minutes: float | None = Field(default=None, ge=0, description="Minutes before the event.")
    hours: float | None = Field(default=None, ge=0, description="Hours before the event (or give minutes).")

    @model_validator(mode="after")
    def _one_unit(self) -> Reminder:
        if (self.minutes is None) == (self.hours is None):
            raise ValueError("give a reminder as {'minutes': 15} or {'hours': 1}, exactly one of the two")
        total = self.total_minutes_exact
        if total != int(total):
            raise ValueError(f"a reminder is whole minutes before the event; {total:g} minutes is not")
        if total > MAX_REMINDER_MINUTES:
            raise ValueError(f"a reminder is at most {MAX_REMINDER_MINUTES} minutes (4 weeks) before the event")
        return self

    @property
    def total_minutes_exact(self) -> float:
        return self.minutes if self.minutes is not None else (self.hours or 0) * 60

    @property
    def total_minutes(self) -> int:
        return int(self.total_minutes_exact)


class SettingFields(Arguments):
    title_template: str | None = Field(default=None, max_length=200, description=f"Event title. {TEMPLATE_HELP}")
    description_template: str | None = Field(
        default=None, max_length=1000, description="Event description, a template as title_template."
    )
    location_template: str | None = Field(
        default=None, max_length=200, description="Event location, a template as title_template."
    )
    color: str | int | None = Field(
        default=None, description="A color name (sage, basil, ...), a Google color id 1-11, or '#rrggbb'."
    )
    visibility: Visibility | None = Field(default=None, description="Google Calendar visibility of the events.")
    reminders: list[Reminder] | None = Field(
        default=None,
        max_length=MAX_REMINDERS,
        description="Reminders, each {'minutes': N} or {'hours': N}. An empty list: no reminders.",
    )
    reset: list[SettingName] = Field(
        default_factory=list, max_length=6, description="Fields to remove, so the level below applies again."
    )


class ClassSettingsChange(SettingFields):
    meeting_time_id: RowId = Field(description="The class meeting, from my_courses (one day of one course).")


class ClassSettingsPath(Arguments):
    meeting_time_id: RowId = Field(description="The class meeting, from my_courses.")


class LevelSettingsChange(SettingFields):
    level: str = Field(
        max_length=80,
        description=(
            "all_classes, a kind of class (lecture, laboratory, studio, seminar, ...), final_exam, "
            "university_events, or university_events:<category> (color only)."
        ),
    )


class LevelPath(Arguments):
    level: str = Field(max_length=80, description="The level, as for update_calendar_settings.")


class SettingsQuery(Arguments):
    # Issue 38: the answer is read before every settings change, so by default it says what the
    # student has; the rest comes when asked.
    every_level: bool = Field(
        default=False,
        description="Every level with the value that applies and where it comes from, and each class's preview "
        "(default: the levels with settings of their own).",
    )
    colors: bool = Field(default=False, description="The color names and ids the settings tools take.")
    template_variables: bool = Field(default=False, description="The {{name}} placeholders a template takes.")


class PreviewRequest(Arguments):
    meeting_time_id: RowId | None = Field(
        default=None, description="One of your class meetings (my_courses); default: your first one this term."
    )
    title_template: str | None = Field(default=None, max_length=200, description="A title template to try.")
    description_template: str | None = Field(default=None, max_length=1000, description="A description template.")
    location_template: str | None = Field(default=None, max_length=200, description="A location template.")


class NotificationsChange(Arguments):
    paused: bool = Field(description="true: pause every reminder of the calendar sync; false: turn them on.")
    minutes: float | None = Field(default=None, gt=0, description="Pause for this many minutes (whole minutes).")
    hours: float | None = Field(default=None, gt=0, description="Or pause for this many hours.")
    until: str | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description=(
            "Or pause until this moment, campus time: a date and time ('2026-12-14T09:00'), a date (its "
            "midnight) or a weekday ('monday': its next midnight). Give the student's words, not arithmetic."
        ),
    )

    @model_validator(mode="after")
    def _one_length(self) -> NotificationsChange:
        ends = [name for name in ("minutes", "hours", "until") if getattr(self, name) is not None]
        if len(ends) > 1:
            raise ValueError(f"give the end of the pause one way (minutes, hours or until), not {' and '.join(ends)}")
        if not self.paused and ends:
            raise ValueError(f"{ends[0]} only goes with paused: true")
        return self


# --- answers --------------------------------------------------------------------------------


class StoredSettings(Answer):
    title_template: str | None
    description_template: str | None
    location_template: str | None
    color: str | None
    visibility: str | None
    reminders: list[int] | None = Field(description="Minutes before the event; [] is no reminders; null: not set.")
    version: int
    updated_at: datetime = Field(description="When the student last changed this row; campus time zone.")
    updated_at_text: str = Field(description="The same on a 12-hour clock, as a student reads it.")


class Resolved(Answer):
    title_template: str
    description_template: str
    location_template: str
    color: str
    visibility: str
    reminders: list[int]


class Sources(Answer):
    title_template: str
    description_template: str
    location_template: str
    color: str
    visibility: str
    reminders: str


class Preview(Answer):
    title: str
    description: str
    location: str


class ClassMeetingRef(Answer):
    meeting_time_id: int
    crn: str
    course_code: str
    title: str
    schedule_type: str | None
    day: str | None
    start_time: str | None
    term: str


class ClassSettingsAnswer(Answer):
    result: Literal["created", "updated", "deleted", "unchanged"] | None = None
    meeting: ClassMeetingRef
    class_settings: StoredSettings | None
    resolved: Resolved
    sources: Sources
    preview: Preview | None = Field(description="my_calendar_settings: with every_level only.")
    not_changed: NotChanged | None = None


class LevelEntry(Answer):
    level: str
    label: str
    settings: StoredSettings | None = Field(
        description="What this level sets itself (null: nothing; a null field: not set here)."
    )
    effective: Resolved = Field(
        description="What an event of this level gets, with every field filled: this level's value, else "
        "the level below it, else the default."
    )
    sources: Sources = Field(
        description="For each field of `effective`, where it comes from: this level or the one below "
        "('global' is all classes) or 'system_default'."
    )


class ColorEntry(Answer):
    name: str
    id: int
    hex: str


class TemplateVariable(Answer):
    name: str
    description: str


class Notifications(Answer):
    paused: bool
    paused_until: datetime | None = Field(description="End of the pause, campus time zone; null: none.")
    paused_until_text: str | None = Field(description="The same on a 12-hour clock, as a student reads it.")


class MyCalendarSettings(Answer):
    levels: list[LevelEntry] = Field(description="The levels with settings of their own; every level with every_level.")
    classes: list[ClassSettingsAnswer] = Field(description="The class meetings with settings of their own.")
    notifications: Notifications
    colors: list[ColorEntry] = Field(description="Empty unless asked for (colors).")
    template_variables: list[TemplateVariable] = Field(description="Empty unless asked for (template_variables).")
    levels_allowed: list[str]
    left_out: str | None = Field(default=None, description="What this answer left out and how to ask for it.")


class LevelSettingsAnswer(Answer):
    result: Literal["created", "updated", "deleted", "unchanged"]
    level: str
    settings: StoredSettings | None
    classes_with_own_settings: int
    category_colors_removed: int = 0
    note: str | None = Field(
        default=None, description="Said when the change reaches no event of the student's calendar now."
    )
    not_changed: NotChanged | None = None


class PreviewAnswer(Answer):
    meeting: ClassMeetingRef | None
    preview: Preview | None
    note: str | None = None


class NotificationsAnswer(Answer):
    result: Literal["updated", "unchanged"]
    paused: bool
    paused_until: datetime | None = Field(description="End of the pause, campus time zone; null: none.")
    paused_until_text: str | None = Field(description="The same on a 12-hour clock, as a student reads it.")
    not_changed: NotChanged | None = None
