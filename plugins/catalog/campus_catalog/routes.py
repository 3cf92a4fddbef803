"""The public catalog REST API (seed 000 table). Each route is one call to the query function
its MCP tool calls, with the arguments validated by the same pydantic model, so the two answer
alike and fail alike (a bad argument is a 400 whose message says what to change)."""

from __future__ import annotations

from typing import Any, TypeVar

from campus_mcp import Settings
from campus_mcp.app import Campus
from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import FromPath
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import schemas as s
from campus_catalog.queries import courses, events, instructors, programs, schedule_check, sections, subjects, terms

ArgumentsT = TypeVar("ArgumentsT", bound=BaseModel)
AnyRequest = Request[Any, Any, Any]


def settings_of(request: AnyRequest) -> Settings:
    # Read from app state rather than injected: the dependency would make Litestar's signature
    # model try to convert the Campus dataclass on every request.
    campus: Campus = request.app.state.campus
    return campus.settings


def arguments(request: AnyRequest, model: type[ArgumentsT], **path: str) -> ArgumentsT:
    """The query string (a repeated key becomes a list) plus path parameters, as ``model``.

    A value that breaks a rule raises pydantic's ValidationError, which the host answers for
    every plugin route as a 400 naming each field and its rule (campus_mcp.route_errors)."""
    raw: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getall(key)
        raw[key] = values if len(values) > 1 else values[0]
    raw.update(path)
    return model.model_validate(raw)


class CatalogController(Controller):
    path = "/api/v1/catalog"

    @get("/terms")
    async def list_terms(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.TermList:
        return await terms.list_terms(db_session, arguments(request, s.TermsQuery), settings_of(request))

    @get("/subjects")
    async def list_subjects(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.SubjectList:
        return await subjects.list_subjects(db_session, arguments(request, s.SubjectsQuery), settings_of(request))

    @get("/sections")
    async def search_sections(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.SectionPage:
        return await sections.search_sections(db_session, arguments(request, s.SectionSearch), settings_of(request))

    @get("/sections/{crn:str}")
    async def get_section(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        crn: FromPath[str],
    ) -> s.SectionDetail:
        return await sections.get_section(
            db_session, arguments(request, s.SectionLookup, crn=crn), settings_of(request)
        )

    @get("/sections/{crn:str}/similar")
    async def similar_sections(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        crn: FromPath[str],
    ) -> s.SimilarSections:
        query = arguments(request, s.SimilarSectionsQuery, crn=crn)
        return await sections.similar_sections(db_session, query, settings_of(request))

    @get("/courses")
    async def search_courses(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.CoursePage:
        return await courses.search_courses(db_session, arguments(request, s.CourseSearch), settings_of(request))

    @get("/courses/{code:str}")
    async def get_course(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        code: FromPath[str],
    ) -> s.CourseDetail:
        return await courses.get_course(db_session, arguments(request, s.CourseLookup, code=code), settings_of(request))

    @get("/programs")
    async def list_programs(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.ProgramList:
        return await programs.list_programs(db_session, arguments(request, s.ProgramsQuery), settings_of(request))

    @get("/programs/{slug:str}")
    async def degree_requirements(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        slug: FromPath[str],
    ) -> s.ProgramDetail:
        query = arguments(request, s.ProgramLookup, slug=slug)
        return await programs.degree_requirements(db_session, query, settings_of(request))

    @get("/terms/{uid:str}/electives")
    async def list_term_electives(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        uid: FromPath[str],
    ) -> s.TermElectives:
        query = arguments(request, s.TermElectivesQuery, term=uid)
        return await programs.list_term_electives(db_session, query, settings_of(request))

    @get("/schedule_check")
    async def check_schedule(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.ScheduleCheck:
        query = arguments(request, s.ScheduleCheckQuery)
        return await schedule_check.check_schedule(db_session, query, settings_of(request))

    @get("/instructors")
    async def search_instructors(
        self, request: AnyRequest, db_session: NamedDependency[AsyncSession]
    ) -> s.InstructorPage:
        query = arguments(request, s.InstructorSearch)
        return await instructors.search_instructors(db_session, query, settings_of(request))

    @get("/instructors/{pub_id:str}")
    async def get_instructor(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        pub_id: FromPath[str],
    ) -> s.InstructorDetail:
        query = arguments(request, s.InstructorLookup, pub_id=pub_id)
        return await instructors.get_instructor(db_session, query, settings_of(request))

    @get("/instructors/{pub_id:str}/similar")
    async def similar_instructors(
        self,
        request: AnyRequest,
        db_session: NamedDependency[AsyncSession],
        pub_id: FromPath[str],
    ) -> s.SimilarInstructors:
        query = arguments(request, s.SimilarInstructorsQuery, pub_id=pub_id)
        return await instructors.similar_instructors(db_session, query, settings_of(request))

    @get("/reviews")
    async def search_reviews(self, request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.ReviewPage:
        return await instructors.search_reviews(db_session, arguments(request, s.ReviewSearch), settings_of(request))


@get("/api/university_calendar_events")
async def university_events(request: AnyRequest, db_session: NamedDependency[AsyncSession]) -> s.EventPage:
    return await events.university_events(db_session, arguments(request, s.EventsQuery), settings_of(request))


ROUTE_HANDLERS: list[Any] = [CatalogController, university_events]
