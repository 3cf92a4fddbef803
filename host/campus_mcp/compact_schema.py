"""Tool schemas in fewer bytes and the same meaning: a client puts every tool's schemas into the
model's context for every chat (issue 16: ``tools/list`` was 101 KB for 19 tools, mostly output
schemas), so what pydantic writes for its own use is left out.

- ``title`` keywords: pydantic makes them from the names ("Course Code" for ``course_code``);
  the name already says it.
- ``additionalProperties: true``: it is what JSON Schema means when the keyword is absent.
- ``anyOf: [{"type": "string"}, {"type": "null"}]`` becomes ``"type": ["string", "null"]``.

Nested models stay one ``$defs`` entry each, referenced by ``$ref`` (pydantic already does so), so
no definition is repeated. A validator accepts exactly what it accepted before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Keywords whose value is a map of names to schemas, and those whose value is a schema or a list
# of schemas: the only places a schema nests. A property *named* "title" is a name, not a keyword.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
# A simple member of ``anyOf`` folds into a ``type`` list only with these keywords: each applies
# to its own type alone (a format to strings, items to arrays), so the union means the same.
_FOLDABLE = frozenset({"type", "format", "items"})


def compact_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without the keywords that add bytes and no meaning (see the module)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                name: compact_schema(inner) if isinstance(inner, Mapping) else inner for name, inner in value.items()
            }
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [compact_schema(inner) if isinstance(inner, Mapping) else inner for inner in value]
        elif key in _SCHEMA_VALUES and isinstance(value, Mapping):
            out[key] = compact_schema(value)
        else:
            out[key] = value
    return _fold_nullable(out)


def _fold_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf`` of one simple schema and ``null`` -> that schema with ``null`` in its ``type``."""
    members = schema.get("anyOf")
    if not isinstance(members, list) or len(members) != 2 or {"type": "null"} not in members:
        return schema
    (other,) = [m for m in members if m != {"type": "null"}]
    if not isinstance(other.get("type"), str) or not set(other) <= _FOLDABLE:
        return schema
    folded = {key: value for key, value in schema.items() if key != "anyOf"}
    folded.update(other)
    folded["type"] = [other["type"], "null"]
    return folded
