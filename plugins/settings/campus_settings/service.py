"""What each settings tool does: one function per tool (and its plan), the one call its REST twin
makes too. Every function reads and writes the signed-in student's own rows only."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timedelta
from typing import Any

from campus_mcp import InvalidInput, PlannedChange, ToolContext, not_changed, plural, utcnow
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings import store
from campus_settings.changes import SettingChange, parse_change
from campus_settings.class_meeting import ClassMeeting
from campus_settings.colors import COLORS
from campus_settings.levels import (
    check_level,
    class_kinds,
    event_categories,
    level_label,
    levels_allowed,
    no_event_note,
)
from campus_settings.meetings import first_meeting, meeting_ref, meeting_words, meetings_by_id, my_meeting
from campus_settings.messages import campus_time, field_lines, on_campus, question
from campus_settings.models import ClassSetting, LevelSetting
from campus_settings.pause_end import pause_end
from campus_settings.resolver import (
    ALL_CLASSES,
    FINAL_EXAM,
    UNIVERSITY,
    StudentSettings,
    class_meeting_event,
    load_student_settings,
    row_fields,
)
from campus_settings.schemas import (
    ClassSettingsAnswer,
    ClassSettingsChange,
    ClassSettingsPath,
    ColorEntry,
    LevelEntry,
    LevelPath,
    LevelSettingsAnswer,
    LevelSettingsChange,
    MyCalendarSettings,
    Notifications,
    NotificationsAnswer,
    NotificationsChange,
    Preview,
    PreviewAnswer,
    PreviewRequest,
    Resolved,
    SettingsQuery,
    Sources,
    StoredSettings,
    TemplateVariable,
)
from campus_settings.templates import TEMPLATE_FIELDS, VARIABLES, check_template

UNCHANGED = ("declined", "cancelled")
RESET_ALL = ["title_template", "description_template", "location_template", "color", "visibility", "reminders"]


def stored(row: ClassSetting | LevelSetting | None, zone: str) -> StoredSettings | None:
    if row is None:
        return None
    return StoredSettings(
        **row_fields(row),
        version=row.version,
        updated_at=on_campus(row.updated_at, zone),
        updated_at_text=campus_time(row.updated_at, zone),
    )


def notifications_fields(paused: bool, until: datetime | None, zone: str) -> dict[str, Any]:
    """``paused``, ``paused_until`` in campus time and its 12-hour text, for both answers."""
    return {
        "paused": paused,
        "paused_until": on_campus(until, zone) if until is not None else None,
        "paused_until_text": campus_time(until, zone) if until is not None else None,
    }


def class_answer(
    meeting: ClassMeeting,
    bundle: StudentSettings,
    row: ClassSetting | None,
    zone: str,
    **extra: Any,
) -> ClassSettingsAnswer:
    resolved = bundle.resolve(class_meeting_event(meeting))
    return ClassSettingsAnswer(
        meeting=meeting_ref(meeting),
        class_settings=stored(row, zone),
        resolved=Resolved(**resolved.values),
        sources=Sources(**resolved.sources),
        preview=Preview(title=resolved.title, description=resolved.description, location=resolved.location),
        **extra,
    )


# --- my_calendar_settings -------------------------------------------------------------------


def _level_entry(level: str, row: LevelSetting | None, bundle: StudentSettings, zone: str) -> LevelEntry:
    values, sources = bundle.level_values(level)
    return LevelEntry(
        level=level,
        label=level_label(level),
        settings=stored(row, zone),
        effective=Resolved(**values),
        sources=Sources(**sources),
    )


async def my_calendar_settings(
    session: AsyncSession, student_id: int, zone: str, shown: SettingsQuery | None = None
) -> MyCalendarSettings:
    """Everything (the dashboard's page), or what ``shown`` asks for (the tool: issue 38's compact
    default, the levels and classes with settings of their own)."""
    shown = shown or SettingsQuery(every_level=True, colors=True, template_variables=True)
    # Five statements: the class settings, the level settings, the kinds of the student's classes,
    # the meetings with settings of their own (when there are), the notifications. The rows of
    # the settings are the bundle's: it read each row again, and each meeting's section (nine).
    bundle = await load_student_settings(session, student_id)
    kinds = await class_kinds(session, student_id)
    order = [ALL_CLASSES, *kinds, FINAL_EXAM, UNIVERSITY]
    order += sorted(level for level in bundle.level_rows if level not in order)
    if not shown.every_level:
        order = [level for level in order if level in bundle.level_rows]
    levels = [_level_entry(lv, bundle.level_rows.get(lv), bundle, zone) for lv in order]
    meetings = await meetings_by_id(session, student_id, sorted(bundle.classes))
    classes = [
        class_answer(meeting, bundle, bundle.class_rows.get(meeting_id), zone)
        for meeting_id, meeting in meetings.items()
    ]
    if not shown.every_level:  # the preview is what the templates give: on request
        classes = [c.model_copy(update={"preview": None}) for c in classes]
    classes.sort(key=lambda c: (c.meeting.term, c.meeting.course_code, c.meeting.meeting_time_id))
    notifications = await store.notification_row(session, student_id)
    return MyCalendarSettings(
        levels=levels,
        classes=classes,
        notifications=Notifications(
            **notifications_fields(
                bool(notifications and notifications.paused),
                notifications.paused_until if notifications else None,
                zone,
            )
        ),
        colors=[ColorEntry(name=name, id=color_id, hex=hexa) for name, (color_id, hexa) in COLORS.items()]
        if shown.colors
        else [],
        template_variables=[TemplateVariable(name=name, description=text) for name, text in VARIABLES.items()]
        if shown.template_variables
        else [],
        levels_allowed=levels_allowed(kinds),
        left_out=_left_out(shown),
    )


def _left_out(shown: SettingsQuery) -> str | None:
    asks = [
        (shown.every_level, "every_level"),
        (shown.colors, "colors"),
        (shown.template_variables, "template_variables"),
    ]
    missing = [name for given, name in asks if not given]
    return f"More with {', '.join(missing)}: true." if missing else None


async def run_my_calendar_settings(context: ToolContext, args: SettingsQuery) -> MyCalendarSettings:
    async with context.session(read_only=True) as session:
        return await my_calendar_settings(session, context.user_id, context.settings.timezone, args)


# --- preview_template -----------------------------------------------------------------------


async def run_preview_template(context: ToolContext, args: PreviewRequest) -> PreviewAnswer:
    templates = {
        field: check_template(field, getattr(args, field))
        for field in TEMPLATE_FIELDS
        if getattr(args, field) is not None
    }
    async with context.session(read_only=True) as session:
        if args.meeting_time_id is not None:
            found: ClassMeeting | None = await my_meeting(session, context.user_id, args.meeting_time_id)
        else:
            found = await first_meeting(session, context.user_id, context.settings)
        if found is None:
            return PreviewAnswer(
                meeting=None,
                preview=None,
                note="You have no class meetings on record, so there is nothing to preview. my_courses lists them.",
            )
        bundle = await load_student_settings(session, context.user_id)
    # An empty template given here is "not set": the preview shows what the level below gives.
    chosen = {field: text for field, text in templates.items() if text}
    resolved = bundle.resolve(class_meeting_event(found), templates=chosen)
    return PreviewAnswer(
        meeting=meeting_ref(found),
        preview=Preview(title=resolved.title, description=resolved.description, location=resolved.location),
    )


# --- update_class_settings ------------------------------------------------------------------


async def _class_state(
    context: ToolContext, meeting_time_id: int
) -> tuple[ClassMeeting, StudentSettings, ClassSetting | None]:
    async with context.session() as session:
        meeting = await my_meeting(session, context.user_id, meeting_time_id)
        bundle = await load_student_settings(session, context.user_id)
    return meeting, bundle, bundle.class_rows.get(meeting_time_id)


def _class_change(args: ClassSettingsChange | ClassSettingsPath) -> SettingChange:
    if isinstance(args, ClassSettingsChange):
        return parse_change(args)
    return SettingChange(values={}, reset=frozenset(RESET_ALL))


async def plan_class_settings(
    context: ToolContext, args: ClassSettingsChange | ClassSettingsPath
) -> PlannedChange | None:
    change = _class_change(args)
    meeting, bundle, row = await _class_state(context, args.meeting_time_id)
    old = row_fields(row)
    new = change.apply(old)
    if new == old:
        return None
    event = class_meeting_event(meeting)
    before = bundle.resolve(event)
    after_bundle = StudentSettings(classes={**bundle.classes, meeting.meeting_time_id: new}, levels=bundle.levels)
    after = after_bundle.resolve(event)
    lines = field_lines(before.values, after.values, old_sources=before.sources, new_sources=after.sources)
    head = f"Change the calendar settings of one class meeting: {meeting_words(meeting)}."
    keeps = [
        "Only this meeting changes: the course's other days and its final exam keep their settings. "
        "Fields not listed keep their current value."
    ]
    if store.empty(new):
        keeps.append("This removes the class's own settings, so it uses your calendar settings again.")
    return PlannedChange(message=question(head, lines, keeps), version=str(row.version) if row else "none")


async def run_update_class_settings(
    context: ToolContext, args: ClassSettingsChange | ClassSettingsPath
) -> ClassSettingsAnswer:
    change = _class_change(args)
    if context.confirmation in UNCHANGED:
        meeting, bundle, row = await _class_state(context, args.meeting_time_id)
        return class_answer(
            meeting,
            bundle,
            row,
            context.settings.timezone,
            result="unchanged",
            not_changed=not_changed(context.confirmation),
        )
    async with context.session() as session:
        await my_meeting(session, context.user_id, args.meeting_time_id)
    result, _row = await store.save_class_setting(context.sessions, context.user_id, args.meeting_time_id, change)
    meeting, bundle, row = await _class_state(context, args.meeting_time_id)
    return class_answer(meeting, bundle, row, context.settings.timezone, result=result)


# --- update_calendar_settings ---------------------------------------------------------------


def _level_change(args: LevelSettingsChange | LevelPath) -> SettingChange:
    if isinstance(args, LevelSettingsChange):
        return parse_change(args)
    return SettingChange(values={}, reset=frozenset(RESET_ALL))


@dataclasses.dataclass(frozen=True)
class _LevelState:
    level: str
    row: LevelSetting | None
    levels: dict[str, LevelSetting]  # every level row of the student
    own: int  # the class meetings with settings of their own
    colors: int
    note: str | None


async def _level_state(context: ToolContext, level: str) -> _LevelState:
    """What a change of ``level`` reads, in one session: the student's level rows and how many
    class settings there are (one statement), and only what the level needs besides (the kinds
    of the student's classes for a level named by a kind not every campus has, the categories'
    colors for university events, the classes or categories there are for the note of a level
    no event has). It was six statements whatever the level."""
    async with context.session() as session:
        name = await check_level(session, context.user_id, level)
        # A kind of class (or all classes) says when the student has none of its classes.
        by_kind = name not in (FINAL_EXAM, UNIVERSITY) and not name.startswith(f"{UNIVERSITY}:")
        levels, own, meetings = await store.level_rows(session, context.user_id, with_meetings=by_kind)
        colors = len(await store.category_colors(session, context.user_id)) if name == UNIVERSITY else 0
        categories = await event_categories(session) if name.startswith(f"{UNIVERSITY}:") else set()
    return _LevelState(name, levels.get(name), levels, own, colors, no_event_note(name, meetings, categories))


def _affects(level: str) -> str:
    if level == ALL_CLASSES:
        return "all your classes"
    if level == FINAL_EXAM:
        return "your final exams"
    if level == UNIVERSITY:
        return "the university events on your calendar"
    if level.startswith(f"{UNIVERSITY}:"):
        return f"the university events of the category {level.split(':', 1)[1]}"
    return f"your {level.replace('_', ' ')} classes"


async def plan_calendar_settings(context: ToolContext, args: LevelSettingsChange | LevelPath) -> PlannedChange | None:
    change = _level_change(args)
    state = await _level_state(context, args.level)
    level, row, own, colors, note = state.level, state.row, state.own, state.colors, state.note
    old = row_fields(row)
    new = change.apply(old)
    clears = level == UNIVERSITY and "color" in change.values and colors > 0
    if new == old and not clears:
        return None
    keeps: list[str] = []
    if level == ALL_CLASSES or (level not in (FINAL_EXAM, UNIVERSITY) and not level.startswith(UNIVERSITY)):
        kinds = [lv for lv in state.levels if lv not in (ALL_CLASSES, FINAL_EXAM) and not lv.startswith(UNIVERSITY)]
        if level == ALL_CLASSES and kinds:
            keeps.append(f"A kind of class with settings of its own keeps them: {', '.join(sorted(kinds))}.")
        if own:
            keeps.append(
                f"{plural(own, 'class meeting')} with settings of {'its' if own == 1 else 'their'} own keep{'s' if own == 1 else ''} them."
            )
    if level == UNIVERSITY:
        if clears:
            keeps.append(
                f"This removes the colors of {plural(colors, 'university event category', 'university event categories')}."
            )
        else:
            keeps.append("Each university event category keeps its own settings.")
    keeps.append("Fields not listed keep their current value.")
    if note is not None:
        keeps.insert(0, note)
    head = f"Change the calendar settings of {_affects(level)} ({level})."
    return PlannedChange(
        message=question(head, field_lines(old, new), keeps),
        version=str(row.version) if row else "none",
        reading=_LevelReading(level, row, own, colors, note),
    )


@dataclasses.dataclass(frozen=True)
class _LevelReading:
    """What the plan of ``update_calendar_settings`` read, which its run needs again."""

    level: str
    row: LevelSetting | None
    own: int
    colors: int
    note: str | None


async def _level_reading(context: ToolContext, args: LevelSettingsChange | LevelPath) -> _LevelReading:
    """The plan's reading when this call planned (a confirmed change reads the state once), else
    read now (nothing to change, or the REST twin, which plans nothing)."""
    planned = context.planned.reading if context.planned is not None else None
    if isinstance(planned, _LevelReading):
        return planned
    state = await _level_state(context, args.level)
    return _LevelReading(state.level, state.row, state.own, state.colors, state.note)


async def run_update_calendar_settings(
    context: ToolContext, args: LevelSettingsChange | LevelPath
) -> LevelSettingsAnswer:
    change = _level_change(args)
    reading = await _level_reading(context, args)
    level, row, own, colors, note = reading.level, reading.row, reading.own, reading.colors, reading.note
    zone = context.settings.timezone
    if context.confirmation in UNCHANGED:
        return LevelSettingsAnswer(
            result="unchanged",
            level=level,
            settings=stored(row, zone),
            classes_with_own_settings=own,
            note=note,
            not_changed=not_changed(context.confirmation),
        )
    removed = colors if level == UNIVERSITY and "color" in change.values else 0
    # The save starts from the row as the plan read it (its version is checked by the write).
    result, row = await store.save_level_setting(context.sessions, context.user_id, level, change, read=row)
    if result == "unchanged" and removed:
        result = "updated"
    return LevelSettingsAnswer(
        result=result,
        level=level,
        settings=stored(row, zone),
        classes_with_own_settings=own,
        category_colors_removed=removed,
        note=note,
    )


# --- set_notifications ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Pause:
    """What a ``set_notifications`` call asks for: paused or not, the end (None: until turned on)
    and, for a length counted from now, that length in words."""

    paused: bool
    until: datetime | None = None
    length: str | None = None


def pause_of(args: NotificationsChange, zone: str) -> Pause:
    if not args.paused:
        return Pause(False)
    if args.until is not None:
        return Pause(True, pause_end(args.until, zone, utcnow()))
    length = args.minutes if args.minutes is not None else (args.hours * 60 if args.hours is not None else None)
    if length is None:
        return Pause(True)
    minutes = math.floor(length)
    if minutes < 1:
        raise InvalidInput(
            "A pause is at least one minute. Give minutes of 1 or more, or leave the length out.", field="minutes"
        )
    return Pause(
        True, (utcnow() + timedelta(minutes=minutes)).replace(second=0, microsecond=0), plural(minutes, "minute")
    )


def _state_words(paused: bool, until: Any, zone: str) -> str:
    if not paused:
        return "your reminders are on"
    return "your reminders are paused" + (f" until {campus_time(until, zone)}" if until else " until you turn them on")


async def _notification_state(context: ToolContext) -> tuple[bool, Any, str]:
    async with context.session() as session:
        row = await store.notification_row(session, context.user_id)
    if row is None:
        return False, None, "none"
    return row.paused, row.paused_until, str(row.version)


async def plan_notifications(context: ToolContext, args: NotificationsChange) -> PlannedChange | None:
    zone = context.settings.timezone
    pause = pause_of(args, zone)
    now_paused, now_until, version = await _notification_state(context)
    if not pause.paused and not now_paused:
        return None
    if pause.paused and now_paused and pause.length is None and pause.until == now_until:
        return None
    now = f"\nNow {_state_words(now_paused, now_until, zone)}."
    if not pause.paused:
        change = "Turn your reminders on again: every event gets the reminders of its settings."
        return PlannedChange(message=change + now, version=version, reading=pause)
    # Every question says the end as a date and time on the campus's clock (issue 39, point 3).
    head = "Pause the reminders of every event in your calendar sync"
    tail = ", also those of class settings."
    if pause.until is None:
        return PlannedChange(message=f"{head} until you turn them on again{tail}{now}", version=version, reading=pause)
    end = f"until {campus_time(pause.until, zone)}"
    if pause.length is None:
        return PlannedChange(message=f"{head} {end}{tail}{now}", version=version, reading=pause)
    # The end of a length counted from now moves with the clock: the confirmation is bound to the
    # length, so a student who answers a minute later still makes the change they were asked.
    return PlannedChange(
        message=f"{head} for {pause.length}, {end}{tail}{now}",
        version=version,
        bound_to=f"{head} for {pause.length}{tail}{now}",
        reading=pause,
    )


async def run_set_notifications(context: ToolContext, args: NotificationsChange) -> NotificationsAnswer:
    # The end the question said, when this call planned (a length counted from now ends where the
    # student read it ends); else read now (nothing to change, or the REST twin).
    planned = context.planned.reading if context.planned is not None else None
    pause = planned if isinstance(planned, Pause) else pause_of(args, context.settings.timezone)
    if context.confirmation in UNCHANGED:
        now_paused, now_until, _version = await _notification_state(context)
        return NotificationsAnswer(
            result="unchanged",
            **notifications_fields(now_paused, now_until, context.settings.timezone),
            not_changed=not_changed(context.confirmation),
        )
    result = await store.save_notifications(context.sessions, context.user_id, pause.paused, pause.until)
    now_paused, now_until, _version = await _notification_state(context)
    return NotificationsAnswer(result=result, **notifications_fields(now_paused, now_until, context.settings.timezone))
