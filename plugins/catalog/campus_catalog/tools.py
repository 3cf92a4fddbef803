"""The catalog MCP tools. Each handler is one call to the query function its REST route calls
(seed 000: the tools share the query objects of the public catalog endpoints)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from campus_mcp import RouteRef, Settings, Tool, ToolContext
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import schemas as s
from campus_catalog.queries import courses, events, instructors, programs, schedule_check, sections, subjects, terms
from campus_catalog.texts import descriptions

SCOPE = "catalog"
API = "/api/v1/catalog"

QueryFunction = Callable[[AsyncSession, Any, Settings], Awaitable[BaseModel]]
AfterAnswer = Callable[[ToolContext, Any], Awaitable[object]]


def one_call(
    query: QueryFunction, after: AfterAnswer | None = None
) -> Callable[[ToolContext, Any], Awaitable[BaseModel]]:
    """A tool handler that is exactly one call to ``query``, with the caller's settings.

    ``after`` sees the answer once it is built (the stale-section refresh of seed 000, "Old
    section data"); it must not change it, and it never delays it: the refresh runs in the
    background, and a failure to queue is recorded, not raised.
    """

    async def handle(context: ToolContext, args: Any) -> BaseModel:
        async with context.session() as session:
            answer = await query(session, args, context.settings)
        if after is not None:
            await after(context, answer)
        return answer

    handle.__name__ = query.__name__
    return handle


async def refresh_stale(context: ToolContext, answer: s.SectionDetail | s.ScheduleCheck) -> None:
    from campus_catalog.refresh_queue import queue_stale_sections

    found = [answer] if isinstance(answer, s.SectionDetail) else answer.sections
    await queue_stale_sections(context, [(section.term.uid, section.crn) for section in found])


_AFTER: dict[str, AfterAnswer] = {"get_section": refresh_stale, "check_schedule": refresh_stale}


# name, title, arguments, answer, query, REST path, data sources of the advisory
_SPECS: list[tuple[str, str, type[BaseModel], type[BaseModel], QueryFunction, str, tuple[str, ...]]] = [
    ("list_terms", "Terms", s.TermsQuery, s.TermList, terms.list_terms, f"{API}/terms", ("sections",)),
    (
        "list_subjects",
        "Subjects",
        s.SubjectsQuery,
        s.SubjectList,
        subjects.list_subjects,
        f"{API}/subjects",
        ("sections",),
    ),
    (
        "search_sections",
        "Search sections",
        s.SectionSearch,
        s.SectionPage,
        sections.search_sections,
        f"{API}/sections",
        ("sections",),
    ),
    (
        "get_section",
        "One section",
        s.SectionLookup,
        s.SectionDetail,
        sections.get_section,
        f"{API}/sections/{{crn}}",
        ("sections", "finals"),
    ),
    (
        "search_courses",
        "Search courses",
        s.CourseSearch,
        s.CoursePage,
        courses.search_courses,
        f"{API}/courses",
        ("course_details",),
    ),
    (
        "get_course",
        "One course",
        s.CourseLookup,
        s.CourseDetail,
        courses.get_course,
        f"{API}/courses/{{code}}",
        ("course_details", "sections"),
    ),
    (
        "list_programs",
        "Degree programs",
        s.ProgramsQuery,
        s.ProgramList,
        programs.list_programs,
        f"{API}/programs",
        ("degree_requirements",),
    ),
    (
        "degree_requirements",
        "Degree requirements",
        s.ProgramLookup,
        s.ProgramDetail,
        programs.degree_requirements,
        f"{API}/programs/{{slug}}",
        ("degree_requirements",),
    ),
    (
        "list_term_electives",
        "Term elective lists",
        s.TermElectivesQuery,
        s.TermElectives,
        programs.list_term_electives,
        f"{API}/terms/{{uid}}/electives",
        ("term_electives",),
    ),
    (
        "similar_sections",
        "Similar sections",
        s.SimilarSectionsQuery,
        s.SimilarSections,
        sections.similar_sections,
        f"{API}/sections/{{crn}}/similar",
        ("sections",),
    ),
    (
        "check_schedule",
        "Check a schedule",
        s.ScheduleCheckQuery,
        s.ScheduleCheck,
        schedule_check.check_schedule,
        f"{API}/schedule_check",
        ("sections",),
    ),
    (
        "search_instructors",
        "Search instructors",
        s.InstructorSearch,
        s.InstructorPage,
        instructors.search_instructors,
        f"{API}/instructors",
        (),
    ),
    (
        "get_instructor",
        "One instructor",
        s.InstructorLookup,
        s.InstructorDetail,
        instructors.get_instructor,
        f"{API}/instructors/{{pub_id}}",
        ("sections",),
    ),
    (
        "similar_instructors",
        "Similar instructors",
        s.SimilarInstructorsQuery,
        s.SimilarInstructors,
        instructors.similar_instructors,
        f"{API}/instructors/{{pub_id}}/similar",
        (),
    ),
    (
        "search_reviews",
        "Search reviews",
        s.ReviewSearch,
        s.ReviewPage,
        instructors.search_reviews,
        f"{API}/reviews",
        (),
    ),
    (
        "university_events",
        "Academic calendar",
        s.EventsQuery,
        s.EventPage,
        events.university_events,
        "/api/university_calendar_events",
        ("university_calendar",),
    ),
]

TOOL_NAMES = tuple(spec[0] for spec in _SPECS)


def catalog_tools(settings: Settings) -> list[Tool]:
    texts = descriptions(settings)
    return [
        Tool(
            name=name,
            title=title,
            description=texts[name],
            scope=SCOPE,
            input_model=arguments,
            output_model=answer,
            handler=one_call(query, _AFTER.get(name)),
            mirrors=(RouteRef(method="GET", path=path),),
            data_sources=sources,
        )
        for name, title, arguments, answer, query, path, sources in _SPECS
    ]
