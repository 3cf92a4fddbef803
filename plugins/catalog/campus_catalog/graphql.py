"""The catalog over GraphQL: ``POST /api/v1/graphql`` and the ``catalog_graphql`` tool.

Invariants (``tests/test_graphql*.py`` and ``test_equality*.py`` hold them):

- Same answers: each top-level field calls the query function its REST route and its MCP tool
  call, with arguments validated by the same pydantic model, and resolves from that answer's
  JSON form. Nested field names are the REST JSON keys (no camelCase), so a query that selects
  every field of ``sections`` gives exactly the JSON of ``GET /api/v1/catalog/sections``.
  The top-level names are those of seed 000 (``terms``, ``sections``, ``scheduleCheck`` ...).
- The types are generated from the pydantic answer models, so a new answer field appears in
  GraphQL without a second definition. Values with no fixed shape (a prerequisite tree) are JSON.
- Read only: the schema has no mutations, and a mutation gets an error that says so before it is
  even validated.
- Limits, each named in its error: depth (``MAX_DEPTH`` levels of selection), cost (each
  selected field counts once for every item of the page around it, see ``query_cost``; at most
  ``MAX_COST``), page size (the models' own ``limit`` bound), and at most one search by meaning
  per query (``semantic.semantic_allowance``).
- One ``AsyncSession`` serves the whole query, so resolvers take turns on it (graphql-core runs
  sibling fields concurrently, and a session allows one operation at a time).
- The links are read per page, not per item (``graphql_batches``): every ``course`` of a page in
  one read, every ``offered_sections`` in another, so a query's statements do not grow with its
  results.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from typing import Any, Literal

import strawberry
from campus_mcp import InFlight, InvalidInput, Settings
from graphql import DocumentNode, GraphQLError, specified_rules
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from strawberry.extensions import QueryDepthLimiter, SchemaExtension
from strawberry.scalars import JSON
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.validation_rules.maybe_null import MaybeNullValidationRule
from strawberry.schema.validation_rules.one_of import OneOfInputValidationRule
from strawberry.types import Info

from campus_catalog import graphql_limits as limits
from campus_catalog import schemas as s
from campus_catalog import semantic
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.graphql_batches import Batches
from campus_catalog.graphql_io import GraphQLAnswer, GraphQLErrorOut, GraphQLRequest
from campus_catalog.graphql_limits import MAX_COST as MAX_COST  # the tests and the docstring name it here
from campus_catalog.graphql_limits import MAX_DEPTH
from campus_catalog.operations import OPERATIONS, QueryFunction

PATH = "/api/v1/graphql"


# ----------------------------------------------------------------------------- types from pydantic

_output_types: dict[type[BaseModel], Any] = {}
# Models being built: a model that contains itself (a prerequisite tree) is JSON below its top.
_building: set[type[BaseModel]] = set()


def _json_field(name: str, nullable: bool = False) -> Any:
    def resolve(root: strawberry.Parent[Any]) -> JSON:
        value: Any = root.get(name) if isinstance(root, Mapping) else None
        return typing.cast(JSON, value)

    def resolve_or_null(root: strawberry.Parent[Any]) -> JSON | None:
        return resolve(root)

    # Nullable when the answer's field is (a prerequisite tree: null is none, or "not loaded here").
    return strawberry.field(resolver=resolve_or_null if nullable else resolve, name=name)


# GraphQL-only links between answers, so one query can walk from a section to its course and
# from a course to its sections (which is also why the depth and cost limits matter). They are
# not REST keys, so a query that leaves them out still gets exactly the REST JSON.
LINK_FIELDS = frozenset({"course", "offered_sections"})
PAGED_LINKS = frozenset({"offered_sections"})


def _course_link() -> Any:
    async def course(root: strawberry.Parent[Any], info: Info) -> GqlCourseDetail:  # type: ignore[name-defined]  # noqa: F821
        context: _Context = info.context
        return await context.batches.course(s.CourseLookup(code=root["course_code"]).code)

    return strawberry.field(resolver=course, description="The course of this section (get_course).")


def _sections_link() -> Any:
    async def offered_sections(
        root: strawberry.Parent[Any],
        info: Info,
        term: str | None = None,
        limit: int | None = None,
        open_only: bool | None = None,
    ) -> GqlSectionPage:  # type: ignore[name-defined]  # noqa: F821
        context: _Context = info.context
        query = _arguments(s.SectionSearch, {"term": term, "limit": limit, "open_only": open_only})
        return await context.batches.offered_sections(root["code"], query)

    return strawberry.field(
        resolver=offered_sections, description="Sections of this course in a term (search_sections); paged."
    )


_LINKS: dict[type[BaseModel], dict[str, Callable[[], Any]]] = {
    s.SectionOut: {"course": _course_link},
    s.SectionSummary: {"course": _course_link},
    s.SectionDetail: {"course": _course_link},
    s.CourseBrief: {"offered_sections": _sections_link},
    s.CourseDetail: {"offered_sections": _sections_link},
}


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _output_annotation(tp: Any) -> Any:
    """The GraphQL type of an answer field; ``None`` means "JSON" (no fixed shape)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(members) != 1:
            return None
        inner = _output_annotation(members[0])
        return None if inner is None else inner | None
    if origin is list:
        (item,) = typing.get_args(tp)
        inner = _output_annotation(item)
        return None if inner is None else list[inner]  # type: ignore[valid-type]
    if origin is Literal:
        return str if all(isinstance(a, str) for a in typing.get_args(tp)) else None
    if tp in (str, int, bool):
        return tp
    if tp is float:
        return float
    if tp in (date, datetime):
        return str  # the ISO text of the REST JSON, not a second date format
    if _is_model(tp):
        return None if tp in _building else output_type(tp)
    return None


def output_type(model: type[BaseModel]) -> Any:
    """The strawberry type of a pydantic answer model (made once, then reused)."""
    if model in _output_types:
        return _output_types[model]
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {}
    _building.add(model)
    try:
        for name, field in model.model_fields.items():
            annotation = _output_annotation(field.annotation)
            if annotation is None:
                namespace[name] = _json_field(name, nullable=type(None) in typing.get_args(field.annotation))
            else:
                annotations[name] = annotation
                if field.description:
                    namespace[name] = strawberry.field(description=field.description)
    finally:
        _building.discard(model)
    for name, link in _LINKS.get(model, {}).items():
        namespace[name] = link()
    namespace["__annotations__"] = annotations
    cls = type(model.__name__, (), namespace)
    doc = (model.__doc__ or "").strip().split("\n\n")[0] or None
    made = strawberry.type(cls, description=doc)
    _output_types[model] = made
    # The links name their types as strings (``GqlCourseDetail``), resolved here when the schema is built.
    globals()[f"Gql{model.__name__}"] = made
    return made


def _argument_annotation(tp: Any) -> Any:
    """GraphQL arguments are all optional: a missing one takes the pydantic model's default."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        return _argument_annotation(members[0]) if len(members) == 1 else JSON | None
    if origin is list:
        return list[str] | None
    if origin is Literal or tp in (str, date, datetime):
        return str | None
    if tp in (int, bool, float):
        return tp | None
    return JSON | None


# ----------------------------------------------------------------------------- the query type


@dataclasses.dataclass
class _Context:
    session: AsyncSession
    settings: Settings
    catalog: CatalogSettings
    # The document ``graphql_limits.check_query`` parsed and checked: strawberry runs that one.
    document: DocumentNode | None = None
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    batches: Batches = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.batches = Batches(self.session, self.settings, self.catalog, self.lock)


def _arguments(model: type[BaseModel], given: Mapping[str, Any]) -> Any:
    try:
        return model.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise InvalidInput(f"Invalid arguments: {problems}. Fix these arguments and ask again.") from None


def _top_field(name: str, query: QueryFunction, arguments: type[BaseModel], answer: type[BaseModel], doc: str) -> Any:
    async def resolve(info: Info, **given: Any) -> Any:
        context: _Context = info.context
        parsed = _arguments(arguments, given)
        async with context.lock:
            result = await query(context.session, parsed, context.settings, context.catalog)
        return result.model_dump(mode="json")

    parameters = [inspect.Parameter("info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Info)]
    for field_name, field in arguments.model_fields.items():
        parameters.append(
            inspect.Parameter(
                field_name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=_argument_annotation(field.annotation),
            )
        )
    resolve.__signature__ = inspect.Signature(parameters, return_annotation=output_type(answer))  # type: ignore[attr-defined]
    resolve.__name__ = name
    return strawberry.field(resolver=resolve, name=name, description=doc)


# Seed 000's GraphQL fields: the rows of the catalog's operations that name one, each with the
# query function its REST twin and its tool call.
FIELDS: tuple[tuple[str, QueryFunction, type[BaseModel], type[BaseModel], str], ...] = tuple(
    (row.graphql, row.query, row.operation.input_model, row.operation.output_model, row.graphql_doc)
    for row in OPERATIONS
    if row.graphql is not None
)


class _CatalogSchema(strawberry.Schema):
    """Logs only what went wrong on the server: a student's bad argument or a query over a limit
    is answered with its message and is not an error of ours (strawberry logs every error)."""

    def process_errors(self, errors: list[GraphQLError], execution_context: Any = None) -> None:
        unexpected = [
            e
            for e in errors
            if e.original_error is not None and not isinstance(e.original_error, (InvalidInput, GraphQLError))
        ]
        super().process_errors(unexpected, execution_context)


class _CheckedDocument(SchemaExtension):
    """Hands strawberry the document ``graphql_limits.check_query`` parsed and validated (with
    ``VALIDATION_RULES``), so it is neither parsed nor validated a second time."""

    def _checked(self) -> DocumentNode | None:
        context = self.execution_context.context
        return context.document if isinstance(context, _Context) else None

    def on_parse(self) -> Iterator[None]:
        if (document := self._checked()) is not None:
            self.execution_context.graphql_document = document
        yield

    def on_validate(self) -> Iterator[None]:
        if self._checked() is not None:
            self.execution_context.pre_execution_errors = []
        yield


def _depth_limit() -> QueryDepthLimiter:
    return QueryDepthLimiter(max_depth=MAX_DEPTH)


# What strawberry would validate with: graphql's rules, its own two, and the depth limit.
VALIDATION_RULES = (
    *specified_rules,
    MaybeNullValidationRule,
    OneOfInputValidationRule,
    *_depth_limit().validation_rules,
)


def _build_schema() -> strawberry.Schema:
    namespace: dict[str, Any] = {
        name: _top_field(name, query, arguments, answer, doc) for name, query, arguments, answer, doc in FIELDS
    }
    query_type = strawberry.type(type("Query", (), namespace), description="The public course catalog (read only).")
    return _CatalogSchema(
        query=query_type,
        config=StrawberryConfig(
            auto_camel_case=False,
            default_resolver=lambda root, name: root.get(name) if isinstance(root, Mapping) else getattr(root, name),
        ),
        extensions=[_CheckedDocument, _depth_limit],
    )


SCHEMA = _build_schema()
PAGED_FIELDS = frozenset(name for name, _, arguments, _, _ in FIELDS if issubclass(arguments, s.Paging))


# ----------------------------------------------------------------------------- limits


PAGES = limits.Pages(top=PAGED_FIELDS, links=PAGED_LINKS)


def query_cost(document: DocumentNode, variables: Mapping[str, Any]) -> int:
    """The cost of the document's one operation on this schema (see ``graphql_limits.query_cost``)."""
    return limits.query_cost(document, variables, PAGES)


# ----------------------------------------------------------------------------- running a query


# Ten queries at the cost limit at once from one address held the server's event loop for seconds
# (issue 30: /healthz took a median of 486 ms); a count per minute lets all ten start together.
IN_FLIGHT = InFlight(
    "catalog/graphql",
    what="GraphQL queries running at once",
    advice="Wait for your running queries to finish before sending more, or ask for less in one query.",
)

SEMANTIC_LIMIT_REASON = (
    "A GraphQL query may make one search by meaning (semantic: true); this one asks for more. "
    "Split it into one query per search by meaning."
)


async def run_graphql(
    session: AsyncSession, request: GraphQLRequest, settings: Settings, catalog: CatalogSettings
) -> GraphQLAnswer:
    """Run one read-only query. Limit breaches raise ``InvalidInput`` before anything runs;
    an error inside a field comes back in ``errors`` beside the fields that did resolve."""
    variables = request.variables or {}
    async with IN_FLIGHT.hold(catalog.graphql_in_flight):
        # Parsing, validating and costing is pure CPU (up to MAX_TOKENS tokens): off the event
        # loop, so that the server's other requests (/healthz among them) are not held behind it.
        document, operation = await asyncio.to_thread(
            limits.check_query,
            SCHEMA._schema,
            VALIDATION_RULES,
            PAGES,
            request.query,
            variables,
            request.operation_name,
        )
        with semantic.semantic_allowance(1, SEMANTIC_LIMIT_REASON):
            result = await SCHEMA.execute(
                request.query,
                variable_values=variables,
                context_value=_Context(session=session, settings=settings, catalog=catalog, document=document),
                operation_name=operation.name.value if operation.name else None,
            )
    errors = [
        GraphQLErrorOut(message=_error_message(error), path=list(error.path) if error.path else None)
        for error in result.errors or ()
    ]
    if result.data is None and errors:
        # Nothing ran (a limit, a misspelled field, a bad argument): an error of the whole request.
        raise InvalidInput(" ".join(dict.fromkeys(e.message for e in errors)))
    return GraphQLAnswer(data=result.data, errors=errors or None)


def _error_message(error: GraphQLError) -> str:
    original = error.original_error
    if isinstance(original, InvalidInput):
        return original.message
    if original is not None and not isinstance(original, GraphQLError):
        # Never a stack trace or an internal message: the server log has it.
        return "This field failed on the server. Try again, or ask for less."
    return limits.explained(error.message)
