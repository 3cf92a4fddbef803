"""The levels of calendar settings a student can set with ``update_calendar_settings``."""

from __future__ import annotations

import re
from collections import Counter

from campus_catalog.api import Section, UniversityEvent
from campus_mcp import InvalidInput
from campus_schedule.models import Enrollment
from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.resolver import ALL_CLASSES, FINAL_EXAM, UNIVERSITY, kind_of

# The kinds of class every campus has; a student's own sections add theirs (kind_of).
COMMON_KINDS = ("lecture", "laboratory", "studio", "seminar", "recitation", "online")
CATEGORY = re.compile(r"^[a-z0-9][a-z0-9_]{0,39}$")


def level_label(level: str) -> str:
    if level == ALL_CLASSES:
        return "All classes"
    if level == FINAL_EXAM:
        return "Final exams"
    if level == UNIVERSITY:
        return "University events"
    if level.startswith(f"{UNIVERSITY}:"):
        return f"University events: {level.split(':', 1)[1]}"
    return f"{level.replace('_', ' ').capitalize()} classes"


# The schedule types of a student's sections (of any term), built once.
_SCHEDULE_TYPES = (
    select(Section.schedule_type)
    .join(Enrollment, Enrollment.section_id == Section.id)
    .where(Enrollment.student_id == bindparam("student_id"))
    .distinct()
)


async def class_kinds(session: AsyncSession, student_id: int) -> list[str]:
    types = await session.scalars(_SCHEDULE_TYPES, {"student_id": student_id})
    return list(dict.fromkeys([*COMMON_KINDS, *(kind_of(t) for t in types.all() if t)]))


async def event_categories(session: AsyncSession) -> set[str]:
    """The categories of the university events on the campus, as levels name them."""
    found = await session.scalars(select(UniversityEvent.category).distinct())
    return {kind_of(category) for category in found.all() if category}


def no_event_note(level: str, meetings: Counter[str], categories: set[str]) -> str | None:
    """The words for a change of a level that no event of the student's calendar has (a kind of
    class the student has no class of, a category no university event has): the setting is kept
    for later, and the student is told that nothing in the calendar changes now."""
    if level in (FINAL_EXAM, UNIVERSITY):
        return None
    later = "so this changes no event in your calendar now; the setting applies to any added later."
    if level.startswith(f"{UNIVERSITY}:"):
        category = level.split(":", 1)[1]
        return None if category in categories else f"No university event has the category {category}, {later}"
    count = sum(meetings.values()) if level == ALL_CLASSES else meetings[level]
    if count:
        return None
    kind = "classes" if level == ALL_CLASSES else f"{level.replace('_', ' ')} classes"
    return f"You have no {kind} on your schedule, {later}"


async def own_class_kinds(session: AsyncSession, student_id: int) -> list[str]:
    """The kinds of class of the student's own sections (of any term), without the common ones."""
    types = await session.scalars(_SCHEDULE_TYPES, {"student_id": student_id})
    return sorted({kind_of(t) for t in types.all() if t})


async def check_level(session: AsyncSession, student_id: int, level: str) -> str:
    text = level.strip().lower()
    # The student's kinds of class are read only for a level that may be one.
    if text in (ALL_CLASSES, FINAL_EXAM, UNIVERSITY) or text in COMMON_KINDS:
        return text
    if text.startswith(f"{UNIVERSITY}:") and CATEGORY.match(text.split(":", 1)[1]):
        return text
    kinds = await class_kinds(session, student_id)
    if text in kinds:
        return text
    shown = level[:40]
    raise InvalidInput(
        f"{shown!r} is not a level of calendar settings. Use {ALL_CLASSES}, a kind of class ({', '.join(kinds)}), "
        f"{FINAL_EXAM}, {UNIVERSITY}, or {UNIVERSITY}:<category> (such as {UNIVERSITY}:holiday). "
        "For one class meeting use update_class_settings.",
        field="level",
    )


def levels_allowed(kinds: list[str]) -> list[str]:
    return [ALL_CLASSES, *kinds, FINAL_EXAM, UNIVERSITY, f"{UNIVERSITY}:<category>"]
