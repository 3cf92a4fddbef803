"""Which settings an event gets (seed 000 "Class settings", ``Preferences::Resolver``).

Each field is found on its own: for a class meeting the first level that sets it wins, in the
order of the seed's table:

1. the class meeting (``individual``),
2. the kind of class (``event_type:<type>``, e.g. ``event_type:laboratory``),
3. all classes (``global``),
4. the defaults (``system_default``).

Final exams and university events are levels of their own: an exam takes ``final_exam``, then the
defaults; a university event takes its category (``university_events:<category>``), then
``university_events``, then the defaults. A class setting never reaches the final exam.

An empty template counts as not set; an empty reminders list counts as set (no reminders).

For one student's events (the calendar feed, a settings answer): ``load_student_settings`` once,
then ``StudentSettings.resolve(event)`` per event.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Literal

from campus_catalog.api import FinalExam, Section, UniversityEvent, hhmm
from campus_schedule.schemas import twelve_hour
from sqlalchemy import BindParameter, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.class_meeting import ClassMeeting
from campus_settings.colors import google_color_id
from campus_settings.models import FIELDS, ClassSetting, LevelSetting
from campus_settings.templates import TEMPLATE_FIELDS, render

EventKind = Literal["class", "final_exam", "university"]
ALL_CLASSES = "all_classes"
FINAL_EXAM = "final_exam"
UNIVERSITY = "university_events"
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# The defaults (level 4). The lab color differs from the lecture color, as in the extension.
CLASS_DEFAULTS: dict[str, Any] = {
    "title_template": "{{course_code}} {{type}}",
    "description_template": "{{title}}\n{{instructor}}\nCRN {{crn}}, section {{section}}",
    "location_template": "{{building}} {{room}}",
    "color": "peacock",
    "visibility": "default",
    "reminders": [15],
}
LAB_COLOR = "sage"
FINAL_DEFAULTS: dict[str, Any] = {
    "title_template": "Final exam: {{course_code}}",
    "description_template": "{{title}}\nCRN {{crn}}",
    "location_template": "{{building}} {{room}}",
    "color": "tomato",
    "visibility": "default",
    "reminders": [1440, 60],
}
UNIVERSITY_DEFAULTS: dict[str, Any] = {
    "title_template": "{{title}}",
    "description_template": "{{category}}",
    "location_template": "",
    "color": "graphite",
    "visibility": "default",
    "reminders": [],
}


def kind_of(schedule_type: str | None) -> str:
    """A schedule type as a level name: "Laboratory" -> "laboratory"; none -> "lecture"."""
    slug = re.sub(r"[^a-z0-9]+", "_", (schedule_type or "lecture").lower()).strip("_")
    return slug or "lecture"


@dataclasses.dataclass(frozen=True)
class CalendarEvent:
    """One event of the student's calendar, as the resolver needs it: its kind, the keys of its
    levels, and the values its templates may use (``templates.VARIABLES``)."""

    kind: EventKind
    variables: Mapping[str, str | None]
    meeting_time_id: int | None = None
    class_kind: str | None = None
    category: str | None = None


def _section_variables(meeting: ClassMeeting) -> dict[str, str | None]:
    """The section's values of a template (the meeting's own are added by the event)."""
    return {
        "course_code": meeting.course_code,
        "title": meeting.title,
        "type": meeting.schedule_type,
        "subject": meeting.subject,
        "course_number": meeting.course_number,
        "section": meeting.section_number,
        "crn": meeting.crn,
        "instructor": ", ".join(meeting.instructors),
        "term": meeting.term,
        "credits": None if meeting.credits is None else f"{meeting.credits:g}",
    }


def class_meeting_event(meeting: ClassMeeting) -> CalendarEvent:
    values = _section_variables(meeting) | {
        "building": meeting.building,
        "building_name": meeting.building_name,
        "room": meeting.room,
        "day": None if meeting.weekday is None else DAY_NAMES[meeting.weekday],
        "start_time": twelve_hour(hhmm(meeting.start_minute)),
        "end_time": twelve_hour(hhmm(meeting.end_minute)),
    }
    return CalendarEvent(
        kind="class",
        variables=values,
        meeting_time_id=meeting.meeting_time_id,
        class_kind=kind_of(meeting.schedule_type),
    )


def final_exam_event(section: Section, exam: FinalExam) -> CalendarEvent:
    """Needs the section with its course, term and instructors loaded (catalog ``load_sections``)."""
    values = _section_variables(ClassMeeting.of(section, None)) | {
        "type": "Final exam",
        "building": exam.building,
        "room": exam.room,
        "day": DAY_NAMES[exam.exam_date.weekday()],
        "start_time": twelve_hour(hhmm(exam.start_minute)),
        "end_time": twelve_hour(hhmm(exam.end_minute)),
    }
    return CalendarEvent(kind="final_exam", variables=values)


def university_event(event: UniversityEvent) -> CalendarEvent:
    category = kind_of(event.category) if event.category else None
    values = {"title": event.title, "category": event.category, "type": "University event", "room": event.location}
    return CalendarEvent(kind="university", variables=values, category=category)


def level_event(level: str) -> CalendarEvent:
    """An event that only ``level``'s settings and those below it reach (a level named by
    ``levels.check_level``): no class meeting of its own, no variables."""
    if level == FINAL_EXAM:
        return CalendarEvent(kind="final_exam", variables={})
    if level == UNIVERSITY or level.startswith(f"{UNIVERSITY}:"):
        return CalendarEvent(kind="university", variables={}, category=level.partition(":")[2] or None)
    return CalendarEvent(kind="class", variables={}, class_kind=None if level == ALL_CLASSES else level)


def is_set(field: str, value: Any) -> bool:
    if field in TEMPLATE_FIELDS:
        return bool(value)
    return value is not None


def row_fields(row: ClassSetting | LevelSetting | None) -> dict[str, Any]:
    return {field: (getattr(row, field) if row is not None else None) for field in FIELDS}


@dataclasses.dataclass(frozen=True)
class ResolvedSettings:
    """The value of each field for one event and the level it came from (``sources``), with the
    title, description and location its templates give."""

    values: Mapping[str, Any]
    sources: Mapping[str, str]
    title: str
    description: str
    location: str

    @property
    def color(self) -> str:
        return str(self.values["color"])

    @property
    def color_id(self) -> int | None:
        return google_color_id(self.color)

    @property
    def visibility(self) -> str:
        return str(self.values["visibility"])

    @property
    def reminders(self) -> list[int]:
        return list(self.values["reminders"])


@dataclasses.dataclass
class StudentSettings:
    """Every settings row of one student: class settings by meeting, level settings by level
    (each row's fields; and the rows themselves, when read by :func:`load_student_settings`, for
    an answer that shows a row's version and time: no second read of a row the bundle holds)."""

    classes: dict[int, dict[str, Any]]
    levels: dict[str, dict[str, Any]]
    class_rows: dict[int, ClassSetting] = dataclasses.field(default_factory=dict)
    level_rows: dict[str, LevelSetting] = dataclasses.field(default_factory=dict)

    def chain(self, event: CalendarEvent) -> list[tuple[str, Mapping[str, Any]]]:
        empty: dict[str, Any] = {}
        if event.kind == "class":
            kind = event.class_kind or "lecture"
            return [
                ("individual", self.classes.get(event.meeting_time_id or 0, empty)),
                (f"event_type:{kind}", self.levels.get(kind, empty)),
                ("global", self.levels.get(ALL_CLASSES, empty)),
            ]
        if event.kind == "final_exam":
            return [(FINAL_EXAM, self.levels.get(FINAL_EXAM, empty))]
        chain: list[tuple[str, Mapping[str, Any]]] = []
        if event.category:
            level = f"{UNIVERSITY}:{event.category}"
            chain.append((level, self.levels.get(level, empty)))
        chain.append((UNIVERSITY, self.levels.get(UNIVERSITY, empty)))
        return chain

    def defaults(self, event: CalendarEvent) -> dict[str, Any]:
        if event.kind == "final_exam":
            return FINAL_DEFAULTS
        if event.kind == "university":
            return UNIVERSITY_DEFAULTS
        if event.class_kind == "laboratory":
            return CLASS_DEFAULTS | {"color": LAB_COLOR}
        return CLASS_DEFAULTS

    @staticmethod
    def _first_set(
        chain: list[tuple[str, Mapping[str, Any]]], defaults: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Each field from the first level of ``chain`` that sets it, else the default; and which."""
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for field in FIELDS:
            for source, row in chain:
                if is_set(field, row.get(field)):
                    values[field], sources[field] = row[field], source
                    break
            else:
                values[field], sources[field] = defaults[field], "system_default"
        return values, sources

    def level_values(self, level: str) -> tuple[dict[str, Any], dict[str, str]]:
        """What an event of ``level`` gets when nothing more specific sets a field, and from which
        level each value comes: ``my_calendar_settings`` shows it beside the level's own row, so an
        unset field reads as the value that applies, not as null (issue 24, point 5)."""
        event = level_event(level)
        chain = [(source, row) for source, row in self.chain(event) if source != "individual"]
        if level == ALL_CLASSES:  # the kinds of class sit above all classes, not below
            chain = [(source, row) for source, row in chain if source == "global"]
        return self._first_set(chain, self.defaults(event))

    def resolve(self, event: CalendarEvent, templates: Mapping[Any, str] | None = None) -> ResolvedSettings:
        """The settings of ``event``. ``templates`` (a preview) stand in for the resolved ones."""
        values, sources = self._first_set(self.chain(event), self.defaults(event))
        shown = {**values, **(templates or {})}
        return ResolvedSettings(
            values=values,
            sources=sources,
            title=render("title_template", shown["title_template"], event.variables),
            description=render("description_template", shown["description_template"], event.variables),
            location=render("location_template", shown["location_template"], event.variables),
        )


# The two reads of a student's settings, built once (building them and their cache keys on every
# call was a tenth of a settings answer's CPU).
_STUDENT: BindParameter[int] = bindparam("student_id")
_CLASS_ROWS = select(ClassSetting).where(ClassSetting.student_id == _STUDENT)
_LEVEL_ROWS = select(LevelSetting).where(LevelSetting.student_id == _STUDENT)


async def load_student_settings(session: AsyncSession, student_id: int) -> StudentSettings:
    classes = (await session.scalars(_CLASS_ROWS, {"student_id": student_id})).all()
    levels = (await session.scalars(_LEVEL_ROWS, {"student_id": student_id})).all()
    return StudentSettings(
        classes={row.meeting_time_id: row_fields(row) for row in classes},
        levels={row.level: row_fields(row) for row in levels},
        class_rows={row.meeting_time_id: row for row in classes},
        level_rows={row.level: row for row in levels},
    )
