"""What ``catalog_graphql`` and ``POST /api/v1/graphql`` take and give.

Apart from ``graphql.py`` so that the catalog's table of operations (``operations.py``) can name
them without building the GraphQL schema, which is itself made from that table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, Field

from campus_catalog import schemas as s


class GraphQLRequest(s.Arguments):
    query: str = Field(min_length=1, description="A GraphQL query on the catalog schema (read only).")
    variables: dict[str, Any] | None = Field(default=None, description="Values of the query's $variables.")
    operation_name: str | None = Field(
        default=None, alias="operationName", description="Which operation to run, when the query has several."
    )

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class GraphQLErrorOut(s.Answer):
    message: str
    path: list[str | int] | None = None


class GraphQLAnswer(s.Answer):
    data: dict[str, Any] | None = Field(description="The selected fields; its shape follows the query.")
    errors: list[GraphQLErrorOut] | None = Field(default=None, description="What went wrong, with its place.")


# Output schemas may be loosened by a tool whose shape follows its input.
LOOSE_OUTPUT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "data": {"type": ["object", "null"], "description": "Follows the query's selection."},
        "errors": {
            "type": ["array", "null"],
            "items": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        },
    },
    "required": ["data"],
}
