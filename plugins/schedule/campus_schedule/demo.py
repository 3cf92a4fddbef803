"""Demo schedules: every demo student has courses in the current term (lecture and lab pairs,
no time conflict, a Friday off for every other student), in the past terms with sections, and in
the next term. Students in threes (student1-3, student4-6, ...) share two courses each term,
so the friends family can befriend students whose schedules overlap.

A fixed seed picks the sections, so a reload gives the same schedules. The loader adds rows and
does not commit (the host's demo loader does).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from campus_catalog.api import Section, Term, find_conflicts
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from campus_schedule.models import Enrollment

SEED = 20261201
COURSES_PER_TERM = 4
SHARED_PER_GROUP = 2
FRIDAY = 4


def _fits(chosen: Sequence[Section], extra: Sequence[Section], friday_off: bool) -> bool:
    if friday_off and any(m.weekday == FRIDAY for s in extra for m in s.meeting_times):
        return False
    if {s.course_id for s in chosen} & {s.course_id for s in extra}:
        return False
    return not find_conflicts([*chosen, *extra])


def _units(sections: Sequence[Section]) -> list[list[Section]]:
    """A lecture with its first linked lab is one unit (taken together); any other timed lecture alone."""
    by_crn = {s.crn: s for s in sections}
    units: list[list[Section]] = []
    for s in sections:
        if s.schedule_type == "Laboratory" or not s.meeting_times:
            continue
        labs = [by_crn[c] for c in (s.linked_crns or []) if c in by_crn and by_crn[c].meeting_times]
        units.append([s, labs[0]] if labs else [s])
    return units


def _pick(rng: random.Random, units: list[list[Section]], chosen: list[Section], count: int, friday_off: bool) -> None:
    for unit in rng.sample(units, len(units)):
        if count <= 0:
            return
        if _fits(chosen, unit, friday_off):
            chosen.extend(unit)
            count -= 1


async def load_demo_schedules(session: AsyncSession, scale: int = 1) -> None:
    rng = random.Random(SEED)
    students = [
        (int(i), str(name))
        for i, name in (await session.execute(text("SELECT id, username FROM students WHERE is_demo ORDER BY id")))
    ]
    # Terms in the order the catalog made their sections (the demo catalog makes its older past terms
    # last, from a seed of their own): a term added that way leaves every other term's picks as they were.
    first_section = (
        select(Section.term_id, func.min(Section.id).label("first"))
        .where(Section.cancelled.is_(False))
        .group_by(Section.term_id)
        .subquery()
    )
    terms = (
        await session.scalars(
            select(Term).join(first_section, first_section.c.term_id == Term.id).order_by(first_section.c.first)
        )
    ).all()
    for term in terms:
        sections = (
            await session.scalars(
                select(Section)
                .where(Section.term_id == term.id, Section.cancelled.is_(False))
                .options(selectinload(Section.meeting_times), selectinload(Section.course))
                .order_by(Section.crn)
            )
        ).all()
        units = _units(sections)
        shared: dict[int, list[Section]] = {}
        for index, (student_id, _name) in enumerate(students):
            friday_off = index % 2 == 0
            group = index // 3
            if group not in shared:
                # The group's common courses keep Fridays free, so every member can take them.
                base: list[Section] = []
                _pick(rng, units, base, SHARED_PER_GROUP, friday_off=True)
                shared[group] = base
            chosen = list(shared[group])
            _pick(rng, units, chosen, COURSES_PER_TERM - SHARED_PER_GROUP, friday_off)
            session.add_all(
                Enrollment(student_id=student_id, term_uid=term.uid, section_id=s.id, crn=s.crn, source="demo")
                for s in chosen
            )
    await session.flush()
