"""The levels of calendar settings a student can set with ``update_calendar_settings``."""

from __future__ import annotations

import re

from campus_catalog.models import Section
from campus_mcp import InvalidInput
from campus_schedule.models import Enrollment
from sqlalchemy import select
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


async def class_kinds(session: AsyncSession, student_id: int) -> list[str]:
    types = await session.scalars(
        select(Section.schedule_type)
        .join(Enrollment, Enrollment.section_id == Section.id)
        .where(Enrollment.student_id == student_id)
        .distinct()
    )
    return list(dict.fromkeys([*COMMON_KINDS, *(kind_of(t) for t in types.all() if t)]))


async def own_class_kinds(session: AsyncSession, student_id: int) -> list[str]:
    """The kinds of class of the student's own sections (of any term), without the common ones."""
    types = await session.scalars(
        select(Section.schedule_type)
        .join(Enrollment, Enrollment.section_id == Section.id)
        .where(Enrollment.student_id == student_id)
        .distinct()
    )
    return sorted({kind_of(t) for t in types.all() if t})


async def check_level(session: AsyncSession, student_id: int, level: str) -> str:
    text = level.strip().lower()
    kinds = await class_kinds(session, student_id)
    if text in (ALL_CLASSES, FINAL_EXAM, UNIVERSITY) or text in kinds:
        return text
    if text.startswith(f"{UNIVERSITY}:") and CATEGORY.match(text.split(":", 1)[1]):
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
