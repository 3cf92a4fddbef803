"""The schedule's ``campus://me/...`` resources: the signed-in student's own, read through their tools.

``campus://me/schedule/{term}`` is ``my_courses`` of that term and ``campus://me/finals/{term}``
``my_finals``; both need the schedule:read permission and are cached per student (the host makes a
resource private when its tool's scope is not always on). A subscription to the schedule hears the
sections on it (:func:`schedule_sections`): a seat, a time or a cancellation there is a change of
the student's schedule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from campus_catalog.api import resolve_term, section_uri
from campus_mcp import ResourceTemplate, ToolContext
from sqlalchemy import select

from campus_schedule.models import Enrollment


async def schedule_sections(context: ToolContext, variables: Mapping[str, str]) -> Sequence[str]:
    """The published URIs of the sections on the student's schedule of that term."""
    async with context.session(read_only=True) as session:
        term = await resolve_term(session, variables["term"], context.settings)
        crns = await session.scalars(
            select(Enrollment.crn).where(Enrollment.student_id == context.user_id, Enrollment.term_uid == term.uid)
        )
        return [section_uri(term.uid, crn) for crn in crns]


def schedule_resources() -> list[ResourceTemplate]:
    return [
        ResourceTemplate(
            uri_template="campus://me/schedule/{term}",
            name="my-schedule",
            title="My schedule",
            description=(
                "The signed-in student's courses in one term (term: a uid such as 202710, or a name). "
                "Subscribe to hear when a section on it changes seats or times or is cancelled."
            ),
            tool="my_courses",
            completers={"term": "term"},
            follows=schedule_sections,
        ),
        ResourceTemplate(
            uri_template="campus://me/finals/{term}",
            name="my-finals",
            title="My finals",
            description="The signed-in student's final exams in one term (term: a uid or a name).",
            tool="my_finals",
            completers={"term": "term"},
        ),
    ]
