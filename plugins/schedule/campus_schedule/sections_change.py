"""set_my_sections: the student sets a term's whole list of sections, after confirming.

``plan`` and ``run`` share the enrollment service's check (``checked_sections``), so a list the
save would refuse is a tool error before any question, and the question shows exactly what the
save does: the sections added and removed, the time conflicts of the new list (shown, never
refused) and that nothing else changes. The dashboard's add and remove forms call the same
``set_term_sections``.
"""

from __future__ import annotations

from collections.abc import Sequence

from campus_catalog.api import Section, Term, find_conflicts, resolve_term
from campus_mcp import PlannedChange, ToolContext, not_changed
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule import queries
from campus_schedule.enrollment import checked_sections, enrolled_sections, set_term_sections
from campus_schedule.schemas import MySectionsChange, SetMySections, twelve_hour

UNCHANGED = ("declined", "cancelled")


def _named(sections: Sequence[Section]) -> str:
    if not sections:
        return "none"
    return ", ".join(f"{s.course.code} (CRN {s.crn})" for s in sections)


def _conflicts(sections: Sequence[Section]) -> str:
    found = find_conflicts([s for s in sections if not s.cancelled])
    if not found:
        return "none"
    return "; ".join(
        f"{c.first.course_code} (CRN {c.first.crn}) and {c.second.course_code} (CRN {c.second.crn}) "
        f"on {c.days} {twelve_hour(c.overlap_start)}-{twelve_hour(c.overlap_end)}"
        for c in found
    )


def _version(current: Sequence[Section]) -> str:
    # The record the change writes is the term's list: an answer given for one list never applies
    # to another (a page edit in between asks again).
    return ",".join(sorted(s.crn for s in current)) or "none"


async def _lists(
    session: AsyncSession, student_id: int, args: SetMySections, context: ToolContext
) -> tuple[Term, list[Section], list[Section]]:
    term = await resolve_term(session, args.term, context.settings)
    wanted = await checked_sections(session, term, args.crns)
    return term, await enrolled_sections(session, student_id, term.uid), wanted


async def plan_my_sections(context: ToolContext, args: SetMySections) -> PlannedChange | None:
    student = context.user_id
    async with context.session() as session:
        term, current, wanted = await _lists(session, student, args, context)
    now = {s.crn for s in current}
    new = {s.crn for s in wanted}
    if now == new:
        return None  # the same list: nobody is asked
    added = [s for s in wanted if s.crn not in now]
    removed = [s for s in current if s.crn not in new]
    message = (
        f"Set your {term.name} ({term.uid}) schedule to {len(wanted)} section{'' if len(wanted) == 1 else 's'}.\n"
        f"Add: {_named(added)}\n"
        f"Remove: {_named(removed)}\n"
        f"Time conflicts in the new list: {_conflicts(wanted)}\n"
        "Nothing else changes: your other terms keep their sections."
    )
    return PlannedChange(message=message, version=_version(current))


async def run_set_my_sections(context: ToolContext, args: SetMySections) -> MySectionsChange:
    student = context.user_id
    async with context.session() as session:
        term = await resolve_term(session, args.term, context.settings)
        before = {s.crn for s in await enrolled_sections(session, student, term.uid)}
        if context.confirmation in UNCHANGED:
            courses = await queries.term_courses(session, student, term, timezone=context.settings.timezone)
            return MySectionsChange(
                **dict(courses),
                result="unchanged",
                added=[],
                removed=[],
                not_changed=not_changed(context.confirmation),
            )
        # "accepted", "not_asked" (an older client, the REST twin) or "nothing_to_change".
        await set_term_sections(session, student, term, args.crns)
        courses = await queries.term_courses(session, student, term, timezone=context.settings.timezone)
    after = [course.crn for course in courses.courses]
    return MySectionsChange(
        **dict(courses),
        result="changed" if set(after) != before else "unchanged",
        added=[crn for crn in after if crn not in before],
        removed=sorted(before - set(after)),
    )
