"""The limits a catalog GraphQL query passes before anything of it runs, cheapest first.

Every step is bounded by the one before it, so that no request can make the server do unbounded
work on its event loop (one query of 655 bytes, fragments that each spread the next ten times,
once froze every request for 13 s):

1. characters (``MAX_QUERY_CHARS``), then tokens while parsing (``MAX_TOKENS``): the document is small;
2. read only: a mutation or a subscription is refused;
3. the operation that will run (``operationName``), chosen here so none is guessed;
4. size: selections with every fragment expanded (``MAX_SELECTIONS``), counted once per fragment
   definition and multiplied by its spreads, so a fan-out costs its number of definitions to count;
   and repeats: one name at most ``MAX_REPEATS`` times in one selection set. Validation and the
   depth limit expand fragments and compare the fields of a name two by two, so they come after;
5. GraphQL validation (unknown fields, fragment cycles, bad argument types);
6. cost (``query_cost``): fields per item of each page, with the ``limit`` values that will run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from campus_mcp import InvalidInput, escaped
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    NullValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
    parse,
    validate,
)
from graphql.validation import ASTValidationRule

from campus_catalog import schemas as s

MAX_DEPTH = 6
MAX_COST = 10_000
MAX_QUERY_CHARS = 10_000
# A query that selects every field of every catalog answer is about 400 tokens.
MAX_TOKENS = 2_000
# Fields, fragment spreads and inline fragments, fragments expanded: what validation walks.
MAX_SELECTIONS = 10_000
# Selections of one name in one selection set (validation compares each two of them).
MAX_REPEATS = 20
# Validation errors quoted back at most (graphql-core stops collecting there too).
MAX_VALIDATION_ERRORS = 10


@dataclass(frozen=True)
class Pages:
    """Which fields hold a page of items: top-level fields with ``limit`` and the paged links."""

    top: frozenset[str]
    links: frozenset[str]


def parse_query(query: str) -> DocumentNode:
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"The query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS:,}.")
    try:
        # ``max_tokens`` counts comments too: a query of nothing but comments is no cheaper to read.
        return parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError as exc:
        if f"more than {MAX_TOKENS} tokens" in exc.message:
            raise InvalidInput(
                f"The query's token limit was exceeded: it has more than {MAX_TOKENS:,} tokens (names, "
                "punctuation, values). Select fewer fields, or split it into several queries."
            ) from None
        raise InvalidInput(f"The query is not valid GraphQL: {exc.message}") from None


def refuse_writes(document: DocumentNode) -> None:
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode) and definition.operation is not OperationType.QUERY:
            raise InvalidInput(
                f"The catalog GraphQL API is read only, so a {definition.operation.value} is refused. "
                'Send a query such as `{ sections(subject: "COMP") { sections { crn title } } }`.'
            )


def select_operation(document: DocumentNode, operation_name: object) -> OperationDefinitionNode:
    """The operation that will run: the one named ``operation_name``, or the only one."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    names = ", ".join(f"`{op.name.value}`" for op in operations if op.name) or "none"
    if operation_name is not None and not isinstance(operation_name, str):
        raise InvalidInput(
            f"`operationName` must be a string, the name of one operation of the query; it was "
            f"{type(operation_name).__name__}. The query names these operations: {names}."
        )
    if not operations:
        raise InvalidInput("The query has no operation: send one such as `{ terms { terms { uid name } } }`.")
    if operation_name is None:
        if len(operations) > 1:
            raise InvalidInput(
                f"The query has {len(operations)} operations, so `operationName` must say which one to run. "
                f"It names these operations: {names}; give each a name if some have none."
            )
        return operations[0]
    for operation in operations:
        if operation.name is not None and operation.name.value == operation_name:
            return operation
    raise InvalidInput(
        f"The query has no operation named '{escaped(operation_name)}'. Its operations: {names}. "
        "Pass one of these as `operationName`, or leave it out when the query has one operation."
    )


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


def expanded_selections(document: DocumentNode, operation: OperationDefinitionNode) -> int:
    """Selections of ``operation`` with its fragments expanded, counted up to ``MAX_SELECTIONS + 1``.

    Each fragment definition is counted once and its count reused at every spread. A spread of a
    fragment being counted (a cycle) or of an unknown one counts 1: validation refuses both.
    """
    fragments = _fragments(document)
    counted: dict[str, int] = {}
    counting: set[str] = set()
    ceiling = MAX_SELECTIONS + 1

    def count(selection_set: SelectionSetNode | None) -> int:
        total = 0
        for selection in selection_set.selections if selection_set else ():
            total += 1
            if isinstance(selection, (FieldNode, InlineFragmentNode)):
                total += count(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                total += fragment(selection.name.value)
            if total >= ceiling:
                return ceiling
        return total

    def fragment(name: str) -> int:
        if name in counted:
            return counted[name]
        if name not in fragments or name in counting:
            return 0
        counting.add(name)
        counted[name] = count(fragments[name].selection_set)
        counting.discard(name)
        return counted[name]

    return count(operation.selection_set)


def refuse_oversized(document: DocumentNode, operation: OperationDefinitionNode) -> None:
    if expanded_selections(document, operation) > MAX_SELECTIONS:
        raise InvalidInput(
            f"The query's size limit was exceeded: with each fragment expanded at every spread it has more than "
            f"{MAX_SELECTIONS:,} selections. Spread fewer fragments, or split it into several queries."
        )


def most_repeated(document: DocumentNode, operation: OperationDefinitionNode) -> tuple[str, int]:
    """The response name selected most often in one selection set, fragments merged in, and how often.

    Validation compares every two fields of one name in a selection set (may they merge?), so
    that work grows with the square of the repeats; a fragment's names are gathered once.
    """
    fragments = _fragments(document)
    gathered: dict[str, Counter[str]] = {}
    gathering: set[str] = set()
    worst = ("", 0)

    def names(selection_set: SelectionSetNode | None) -> Counter[str]:
        nonlocal worst
        here: Counter[str] = Counter()
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                here[(selection.alias or selection.name).value] += 1
                names(selection.selection_set)  # a level of its own
            elif isinstance(selection, InlineFragmentNode):
                here.update(names(selection.selection_set))
            elif isinstance(selection, FragmentSpreadNode):
                here.update(fragment(selection.name.value))
        for name, times in here.items():
            if times > worst[1]:
                worst = (name, times)
        return here

    def fragment(name: str) -> Counter[str]:
        if name not in gathered:
            if name not in fragments or name in gathering:
                return Counter()
            gathering.add(name)
            gathered[name] = names(fragments[name].selection_set)
            gathering.discard(name)
        return gathered[name]

    names(operation.selection_set)
    return worst


def refuse_repeats(document: DocumentNode, operation: OperationDefinitionNode) -> None:
    name, times = most_repeated(document, operation)
    if times > MAX_REPEATS:
        raise InvalidInput(
            f"The query's repeat limit was exceeded: it selects `{name}` {times} times in one place (fragments "
            f"included), and the limit is {MAX_REPEATS}. Select each field once, or give each copy an alias."
        )


def explained(message: str) -> str:
    """A GraphQL error message, with the limit it is about named as the other limits are."""
    if "exceeds maximum operation depth" in message:
        return f"The query's depth limit was exceeded: {message}. Nest at most {MAX_DEPTH} levels."
    return message


def validation_errors(
    schema: GraphQLSchema, document: DocumentNode, rules: Sequence[type[ASTValidationRule]]
) -> list[str]:
    errors = validate(schema, document, rules, max_errors=MAX_VALIDATION_ERRORS)
    return [explained(error.message) for error in errors]


@dataclass
class _Costing:
    fragments: dict[str, FragmentDefinitionNode]
    variables: Mapping[str, Any]
    defaults: Mapping[str, Any]
    pages: Pages
    memo: dict[tuple[str, bool], int] = field(default_factory=dict)
    costing: set[str] = field(default_factory=set)

    def limit(self, node: FieldNode) -> int:
        """The ``limit`` this field will run with: given, else the variable's default, else the field's."""
        value: Any = None
        for argument in node.arguments or ():
            if argument.name.value != "limit":
                continue
            if isinstance(argument.value, IntValueNode):
                value = int(argument.value.value)
            elif isinstance(argument.value, VariableNode):
                name = argument.value.name.value
                value = self.variables.get(name) if name in self.variables else self.defaults.get(name)
        if value is None:
            return s.DEFAULT_PAGE_SIZE
        if isinstance(value, bool) or not isinstance(value, int):
            # Not an Int: execution refuses it before any field runs; cost the largest page meanwhile.
            return s.MAX_PAGE_SIZE
        if not 1 <= value <= s.MAX_PAGE_SIZE:
            raise InvalidInput(
                f"`limit` must be between 1 and {s.MAX_PAGE_SIZE}; `{node.name.value}` was given {value}. "
                "Pass a page size in that range, and `offset` for the next page."
            )
        return value

    def walk(self, selection_set: SelectionSetNode | None, top: bool) -> int:
        """Fields of one item of ``selection_set``'s page (multiply by the items around it)."""
        total = 0
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                total += 1
                if selection.selection_set is not None:
                    name = selection.name.value
                    paged = (top and name in self.pages.top) or name in self.pages.links
                    inner = self.walk(selection.selection_set, False)
                    total += (self.limit(selection) if paged else 1) * inner
            elif isinstance(selection, InlineFragmentNode):
                total += self.walk(selection.selection_set, top)
            elif isinstance(selection, FragmentSpreadNode):
                total += self.fragment(selection.name.value, top)
        return total

    def fragment(self, name: str, top: bool) -> int:
        key = (name, top)
        if key not in self.memo:
            if name not in self.fragments or name in self.costing:
                return 0  # validation has refused both; this only guards a direct caller
            self.costing.add(name)
            self.memo[key] = self.walk(self.fragments[name].selection_set, top)
            self.costing.discard(name)
        return self.memo[key]


def _variable_defaults(operation: OperationDefinitionNode) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    for definition in operation.variable_definitions or ():
        value = definition.default_value
        if isinstance(value, IntValueNode):
            defaults[definition.variable.name.value] = int(value.value)
        elif value is not None and not isinstance(value, NullValueNode):
            defaults[definition.variable.name.value] = value  # not an Int: validation refuses it for a limit
    return defaults


def query_cost(
    document: DocumentNode,
    variables: Mapping[str, Any],
    pages: Pages,
    operation: OperationDefinitionNode | None = None,
) -> int:
    """Fields ``operation`` may resolve: each selected field once for every item of the page around it.

    A paged field (``sections``, ``reviews``...) holds ``limit`` items: the value given for it,
    else its variable's default, else the default page size; a ``limit`` outside 1 to
    ``MAX_PAGE_SIZE`` is refused. Fields inside an item (its meetings, its instructors) are part
    of that item, so they count once per item. Each fragment is costed once and reused.
    """
    chosen = operation or select_operation(document, None)
    costing = _Costing(_fragments(document), variables, _variable_defaults(chosen), pages)
    return costing.walk(chosen.selection_set, True)


def check_query(
    schema: GraphQLSchema,
    rules: Sequence[type[ASTValidationRule]],
    pages: Pages,
    query: str,
    variables: Mapping[str, Any],
    operation_name: object,
) -> tuple[DocumentNode, OperationDefinitionNode]:
    """Every limit, in the order of the module's docstring; the document and the operation to run.

    ``rules`` are all the validation rules of the schema (the depth limit among them): the
    document is validated here, once, and executed without a second validation."""
    document = parse_query(query)
    refuse_writes(document)
    operation = select_operation(document, operation_name)
    refuse_oversized(document, operation)
    refuse_repeats(document, operation)
    if errors := validation_errors(schema, document, rules):
        raise InvalidInput(" ".join(dict.fromkeys(errors)))
    cost = query_cost(document, variables, pages, operation)
    if cost > MAX_COST:
        raise InvalidInput(
            f"The query's cost limit was exceeded: it may resolve {cost:,} fields, and the limit is {MAX_COST}. "
            "Select fewer fields, or pass a smaller `limit` to the lists."
        )
    return document, operation
