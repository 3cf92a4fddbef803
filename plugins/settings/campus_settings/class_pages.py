"""The "Your classes" card of the Calendar settings page (issue 12, point 8): each weekly class
meeting of the student's current term (what ``my_courses`` lists) with its resolved settings and
a form to change or reset its own, saved with the same calls as ``update_class_settings``.

A meeting with settings of its own from another term is listed too, so it can always be reset.
"""

from __future__ import annotations

from html import escape
from typing import Any

from campus_catalog.api import resolve_term
from campus_mcp import CSRF_FIELD, NotFound, Settings, hidden
from campus_schedule.enrollment import enrolled_sections
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_settings import store
from campus_settings.changes import SettingChange, parse_change
from campus_settings.class_meeting import ClassMeeting
from campus_settings.meetings import meeting_words, meetings_by_id, my_meeting
from campus_settings.messages import reminders_text
from campus_settings.resolver import StudentSettings, class_meeting_event, load_student_settings
from campus_settings.schemas import ClassSettingsChange
from campus_settings.service import RESET_ALL
from campus_settings.tools import SETTINGS_PAGE

CLASSES_PAGE = f"{SETTINGS_PAGE}/classes"
FIELDS = (
    ("title_template", "Title template"),
    ("description_template", "Description template"),
    ("location_template", "Location template"),
    ("color", "Color (a name, 1-11 or #rrggbb)"),
    ("reminders", "Reminders, minutes before (such as 10, 60; 'none' for no reminders)"),
)


async def _meetings(
    session: AsyncSession, student: int, settings: Settings, bundle: StudentSettings
) -> list[ClassMeeting]:
    try:
        term = await resolve_term(session, None, settings)
        sections = await enrolled_sections(session, student, term.uid)
    except NotFound:  # no current term on record: only the meetings with settings of their own
        sections = []
    listed = [
        ClassMeeting.of(s, m) for s in sections for m in sorted(s.meeting_times, key=lambda m: (m.weekday or 0, m.id))
    ]
    seen = {m.meeting_time_id for m in listed}
    others = await meetings_by_id(session, student, sorted(set(bundle.classes) - seen))
    return listed + list(others.values())


def _stored(row: Any, field: str) -> str:
    value = getattr(row, field, None) if row is not None else None
    if field == "reminders" and value is not None:
        return ", ".join(str(m) for m in value) if value else "none"
    return "" if value is None else str(value)


async def classes_card(
    session: AsyncSession, student: int, settings: Settings, csrf: str, form: dict[str, str] | None
) -> str:
    """The card; ``form`` is a refused post, shown again in its meeting's form."""
    bundle = await load_student_settings(session, student)
    items = []
    for meeting in await _meetings(session, student, settings, bundle):
        row = bundle.class_rows.get(meeting.meeting_time_id)
        resolved = bundle.resolve(class_meeting_event(meeting))
        again = form if form is not None and form.get("meeting_time_id") == str(meeting.meeting_time_id) else None
        slug = f"class-{meeting.meeting_time_id}"
        inputs = "".join(
            f'<label for="{slug}-{f}">{label}</label><input type="text" id="{slug}-{f}" name="{f}" maxlength="1000" '
            f'value="{escape(again[f] if again is not None else _stored(row, f))}">'
            for f, label in FIELDS
        )
        own = "Settings of its own." if row is not None else "No settings of its own: your calendar settings apply."
        reset = '<button type="submit" name="action" value="reset">Use my calendar settings</button>' if row else ""
        items.append(
            f'<details class="class-settings"{" open" if again is not None else ""}><summary>'
            f"{escape(meeting_words(meeting))}</summary>"
            f'<p class="muted">{escape(own)} Now: {escape(resolved.title)}, color {escape(resolved.values["color"])} '
            f"({escape(resolved.sources['color'])}), reminders {escape(reminders_text(resolved.values['reminders']))}.</p>"
            f'<form method="post" action="{CLASSES_PAGE}">{hidden(CSRF_FIELD, csrf)}'
            f"{hidden('meeting_time_id', str(meeting.meeting_time_id))}{inputs}"
            '<div class="actions"><button type="submit" name="action" value="save" class="primary">Save</button>'
            f"{reset}</div></form></details>"
        )
    body = "".join(items) or "<p>You have no class meetings this term. Add your courses on My schedule.</p>"
    return (
        '<section class="card" aria-labelledby="classes-title"><h2 id="classes-title">Your classes</h2>'
        "<p>One weekly class meeting at a time: a course meeting Monday and Wednesday has two. "
        "A field left empty uses your calendar settings.</p>"
        f"{body}</section>"
    )


def _change(form: dict[str, str], fields: dict[str, Any]) -> SettingChange:
    if form.get("action") == "reset":
        return SettingChange(values={}, reset=frozenset(RESET_ALL))
    return parse_change(ClassSettingsChange.model_validate({"meeting_time_id": form.get("meeting_time_id"), **fields}))


async def save_class(
    sessions: async_sessionmaker[AsyncSession], student: int, form: dict[str, str], fields: dict[str, Any]
) -> None:
    """What ``update_class_settings`` does once the student confirmed: the meeting must be theirs
    (the same NotFound for another student's meeting as for an unknown id), then the save with
    its version check. ``fields`` are the form's values as the tool's arguments."""
    change = _change(form, fields)
    try:
        meeting_time_id = int(form.get("meeting_time_id", ""))
    except ValueError:
        meeting_time_id = 0
    async with sessions() as session:
        await my_meeting(session, student, meeting_time_id)
    await store.save_class_setting(sessions, student, meeting_time_id, change)
