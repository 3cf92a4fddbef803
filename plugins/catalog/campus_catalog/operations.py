"""The catalog's operations, each declared once: its MCP tool, its REST route, its GraphQL field,
its description and its examples all come from its row of ``OPERATIONS``.

Each row is one call to a query function (seed 000: the tools share the query objects of the
public catalog endpoints). The host makes the tool and the REST twin from the row's
:class:`campus_mcp.Operation` (``operation_tools``, ``operation_routes``); ``graphql.py`` makes
the GraphQL field named in ``graphql`` from the same query and models. The description is the
row's entry in ``texts.descriptions``, which puts in the campus words of the settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from campus_mcp import Operation, Settings, ToolContext, ToolExample
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import answers
from campus_catalog import schemas as s
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.examples import SPARSE_CRN, demo, sparse
from campus_catalog.graphql_io import LOOSE_OUTPUT_SCHEMA, GraphQLAnswer, GraphQLRequest
from campus_catalog.queries import courses, events, instructors, programs, schedule_check, sections, subjects, terms

SCOPE = "catalog"
API = "/api/v1/catalog"

# (session, arguments, the host's settings, the catalog's own settings): the catalog's words such as
# the override office are in the last (``CatalogSettings``, the plugin's settings object).
QueryFunction = Callable[[AsyncSession, Any, Settings, CatalogSettings], Awaitable[BaseModel]]


def one_call(query: QueryFunction) -> Callable[[ToolContext, Any], Awaitable[BaseModel]]:
    """``Operation.run`` of a catalog row: exactly one call to ``query``, with the host's settings and
    the catalog's (``context.plugin_settings``: a tool call and its REST twin get the same object)."""

    async def run(context: ToolContext, args: Any) -> BaseModel:
        # A read-only session: the catalog's query functions only read (imports write, in jobs),
        # so on PostgreSQL each statement is one round trip, with no BEGIN and no ROLLBACK around
        # it. A multi-statement answer may then read across a refresh that lands between its
        # statements: public catalog data refreshed section by section, where a seat count a
        # moment newer is no harm. With the answer cache on, it is the session the cache read
        # its key in.
        async with context.session(read_only=True) as session:
            return await query(session, args, context.settings, context.plugin_settings)

    run.__name__ = query.__name__
    return run


async def run_check_schedule(context: ToolContext, args: s.ScheduleCheckQuery) -> BaseModel:
    """check_schedule with the signed-in student's record (issue 37, point 7): their own sections
    need no override, and the prerequisites are checked against their history."""
    from campus_catalog.queries.terms import known_term
    from campus_catalog.student_record import student_record

    async with context.session(read_only=True) as session:
        record = None
        if context.principal.user_id is not None:
            term = await known_term(session, args.term, context.settings)
            record = await student_record(context, session, term.uid)
        return await schedule_check.check_schedule(session, args, context.settings, context.plugin_settings, record)


async def refresh_stale(context: ToolContext, answer: s.SectionDetail | s.ScheduleCheck) -> None:
    """The stale-section refresh of seed 000 ("Old section data"): queued after the answer is
    built, never changing or delaying it (the refresh runs in the background)."""
    from campus_catalog.refresh_queue import queue_stale_sections

    found = [answer] if isinstance(answer, s.SectionDetail) else answer.sections
    await queue_stale_sections(context, [(section.term.uid, section.crn) for section in found])


async def run_graphql(
    session: AsyncSession, request: GraphQLRequest, settings: Settings, catalog: CatalogSettings
) -> GraphQLAnswer:
    """The query function of catalog_graphql. Imported when called: the GraphQL schema is made
    from this table, so ``graphql.py`` imports this module, not the other way round."""
    from campus_catalog import graphql

    return await graphql.run_graphql(session, request, settings, catalog)


def _description(name: str) -> Callable[[Settings, Any], str]:
    def describe(settings: Settings, plugin_settings: CatalogSettings) -> str:
        from campus_catalog.texts import descriptions

        return descriptions(settings, plugin_settings)[name]

    return describe


@dataclasses.dataclass(frozen=True, kw_only=True)
class CatalogOperation:
    """A row of the catalog's table: the host's ``Operation`` and what GraphQL needs besides."""

    operation: Operation
    query: QueryFunction
    # The top-level GraphQL field (seed 000's names), None when the operation has none.
    graphql: str | None = None
    graphql_doc: str = ""

    @property
    def name(self) -> str:
        return self.operation.name


def _row(
    *,
    name: str,
    title: str,
    query: QueryFunction,
    input_model: type[BaseModel],
    output_model: type[BaseModel],
    path: str,
    data_sources: tuple[str, ...],
    examples: Sequence[ToolExample],
    method: Literal["GET", "POST"] = "GET",
    idempotent: bool = False,
    output_schema_override: Mapping[str, Any] | None = None,
    graphql: str | None = None,
    graphql_doc: str = "",
    after: Callable[[ToolContext, Any], Awaitable[object]] | None = None,
    run: Callable[[ToolContext, Any], Awaitable[BaseModel]] | None = None,
) -> CatalogOperation:
    operation = Operation(
        name=name,
        title=title,
        description=_description(name),
        scope=SCOPE,
        input_model=input_model,
        output_model=output_model,
        run=run or one_call(query),
        # Every catalog answer is public (a signed-in student's check_schedule is their own: its
        # own ``run``); a GraphQL answer is keyed by its whole query, not kept.
        cache=answers.cache_of(output_model, personal_when_signed_in=run is not None)
        if query is not run_graphql
        else None,
        method=method,
        path=path,
        data_sources=data_sources,
        after=after,
        examples=tuple(examples),
        idempotent=idempotent,
        output_schema_override=output_schema_override,
    )
    return CatalogOperation(operation=operation, query=query, graphql=graphql, graphql_doc=graphql_doc)


OPERATIONS: tuple[CatalogOperation, ...] = (
    _row(
        name="list_terms",
        title="Terms",
        query=terms.list_terms,
        input_model=s.TermsQuery,
        output_model=s.TermList,
        path=f"{API}/terms",
        data_sources=("sections",),
        graphql="terms",
        graphql_doc="The terms, the current term and the next term.",
        examples=(demo(), sparse()),
    ),
    _row(
        name="list_subjects",
        title="Subjects",
        query=subjects.list_subjects,
        input_model=s.SubjectsQuery,
        output_model=s.SubjectList,
        path=f"{API}/subjects",
        data_sources=("sections",),
        graphql="subjects",
        graphql_doc="Subjects with their section counts.",
        examples=(demo(), sparse()),
    ),
    _row(
        name="search_sections",
        title="Search sections",
        query=sections.search_sections,
        input_model=s.SectionSearch,
        output_model=s.SectionPage,
        path=f"{API}/sections",
        data_sources=("sections",),
        graphql="sections",
        graphql_doc="Sections, with every catalog filter.",
        examples=(
            demo(subject="COMP", days="TR", open_only=True),
            demo(q="intro to programming"),
            demo(q="a class about the stock market", semantic=True),
            sparse(),
        ),
    ),
    _row(
        name="get_section",
        title="One section",
        query=sections.get_section,
        input_model=s.SectionLookup,
        output_model=s.SectionDetail,
        path=f"{API}/sections/{{crn}}",
        data_sources=("sections", "finals"),
        graphql="section",
        graphql_doc="One section by CRN.",
        after=refresh_stale,
        examples=(demo(as_student=True, crn="20001"), sparse(crn=SPARSE_CRN)),
    ),
    _row(
        name="search_courses",
        title="Search courses",
        query=courses.search_courses,
        input_model=s.CourseSearch,
        output_model=s.CoursePage,
        path=f"{API}/courses",
        data_sources=("course_details",),
        graphql="courses",
        graphql_doc="Courses by code, title words or meaning.",
        examples=(demo(q="programming"), sparse()),
    ),
    _row(
        name="get_course",
        title="One course",
        query=courses.get_course,
        input_model=s.CourseLookup,
        output_model=s.CourseDetail,
        path=f"{API}/courses/{{code}}",
        data_sources=("course_details", "sections"),
        graphql="course",
        graphql_doc="One course with its prerequisites.",
        examples=(demo(code="COMP 2000"), sparse(code="ZZZ 1000")),
    ),
    _row(
        name="list_programs",
        title="Degree programs",
        query=programs.list_programs,
        input_model=s.ProgramsQuery,
        output_model=s.ProgramList,
        path=f"{API}/programs",
        data_sources=("degree_requirements",),
        examples=(demo(), sparse()),
    ),
    _row(
        name="degree_requirements",
        title="Degree requirements",
        query=programs.degree_requirements,
        input_model=s.ProgramLookup,
        output_model=s.ProgramDetail,
        path=f"{API}/programs/{{slug}}",
        data_sources=("degree_requirements",),
        examples=(demo(slug="bs-biomedical-engineering"), sparse(slug="bare-program")),
    ),
    _row(
        name="list_term_electives",
        title="Term elective lists",
        query=programs.list_term_electives,
        input_model=s.TermElectivesQuery,
        output_model=s.TermElectives,
        path=f"{API}/terms/{{term}}/electives",
        data_sources=("term_electives",),
        examples=(demo(include_full_text=False), sparse()),
    ),
    _row(
        name="similar_sections",
        title="Similar sections",
        query=sections.similar_sections,
        input_model=s.SimilarSectionsQuery,
        output_model=s.SimilarSections,
        path=f"{API}/sections/{{crn}}/similar",
        data_sources=("sections",),
        examples=(demo(crn="20001", limit=5), sparse(crn=SPARSE_CRN)),
    ),
    _row(
        name="check_schedule",
        title="Check a schedule",
        query=schedule_check.check_schedule,
        run=run_check_schedule,
        input_model=s.ScheduleCheckQuery,
        output_model=s.ScheduleCheck,
        path=f"{API}/schedule_check",
        data_sources=("sections",),
        graphql="scheduleCheck",
        graphql_doc="Conflicts, lecture and lab pairs and totals of a set of CRNs.",
        after=refresh_stale,
        examples=(
            demo(as_student=True, crns=["10001", "10002", "10003", "10004"]),
            sparse(crns=[SPARSE_CRN, "55556"]),
        ),
    ),
    _row(
        name="search_instructors",
        title="Search instructors",
        query=instructors.search_instructors,
        input_model=s.InstructorSearch,
        output_model=s.InstructorPage,
        path=f"{API}/instructors",
        data_sources=(),
        graphql="instructors",
        graphql_doc="Instructors.",
        examples=(demo(subject="COMP"), sparse()),
    ),
    _row(
        name="get_instructor",
        title="One instructor",
        query=instructors.get_instructor,
        input_model=s.InstructorLookup,
        output_model=s.InstructorDetail,
        path=f"{API}/instructors/{{pub_id}}",
        data_sources=("sections",),
        graphql="instructor",
        graphql_doc="One instructor.",
        examples=(demo(pub_id="ins-x37kjuha"), sparse(pub_id="sparse-instructor")),
    ),
    _row(
        name="similar_instructors",
        title="Similar instructors",
        query=instructors.similar_instructors,
        input_model=s.SimilarInstructorsQuery,
        output_model=s.SimilarInstructors,
        path=f"{API}/instructors/{{pub_id}}/similar",
        data_sources=(),
        examples=(demo(pub_id="ins-x37kjuha"), sparse(pub_id="sparse-instructor")),
    ),
    _row(
        name="search_reviews",
        title="Search reviews",
        query=instructors.search_reviews,
        input_model=s.ReviewSearch,
        output_model=s.ReviewPage,
        path=f"{API}/reviews",
        data_sources=(),
        graphql="reviews",
        graphql_doc="Reviews by words, meaning or sentiment.",
        examples=(
            demo(sentiment="negative", limit=5),
            demo(q="explains things clearly", semantic=True),
            sparse(),
        ),
    ),
    _row(
        name="university_events",
        title="Academic calendar",
        query=events.university_events,
        input_model=s.EventsQuery,
        output_model=s.EventPage,
        path="/api/university_calendar_events",
        data_sources=("university_calendar",),
        examples=(demo(), sparse()),
    ),
    _row(
        name="catalog_graphql",
        title="Catalog GraphQL query",
        query=run_graphql,
        input_model=GraphQLRequest,
        output_model=GraphQLAnswer,
        path="/api/v1/graphql",  # a JSON body: query, variables, operationName
        method="POST",
        idempotent=True,
        output_schema_override=LOOSE_OUTPUT_SCHEMA,  # its data follows the query's selection
        data_sources=(),
        examples=(
            demo(
                as_student=True,
                query='{ sections(subject: "COMP", open_only: true, limit: 5) { total sections { crn title '
                "meetings { days start end } instructors course { code prerequisites } } } }",
            ),
            sparse(query="{ terms { terms { uid name } } }"),
        ),
    ),
)

# The lookup tools: every operation but the GraphQL query that joins them.
TOOL_NAMES = tuple(row.name for row in OPERATIONS if row.query is not run_graphql)
BY_NAME = {row.name: row for row in OPERATIONS}


def catalog_operations() -> list[Operation]:
    """Every operation of the catalog, for operation_tools, operation_routes and operation_examples."""
    # Build the GraphQL schema now, at start-up: built on the first query instead, it held the
    # event loop for about 0.4 s, and every other request of the server waited.
    from campus_catalog import graphql  # noqa: F401

    return [row.operation for row in OPERATIONS]
