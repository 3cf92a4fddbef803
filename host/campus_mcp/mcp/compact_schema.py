"""Tool schemas in fewer bytes and the same meaning: a client puts every tool's schemas into the
model's context for every chat (``tools/list`` was mostly output schemas), so what pydantic writes for its own use is left out.

- ``title`` keywords: pydantic makes them from the names ("Course Code" for ``course_code``);
  the name already says it.
- ``additionalProperties: true``: it is what JSON Schema means when the keyword is absent.
- ``default: null``: an optional field left out is left out; the description says what that means.
- ``anyOf: [{"type": "string"}, {"type": "null"}]`` becomes ``"type": ["string", "null"]`` in an
  output schema only. An input schema keeps the ``anyOf``: a model fills it, and a client for a
  single-type dialect (Gemini's function declarations) cannot take a list of types, while every
  client's dialect takes ``anyOf`` (docs/tool-schema-dialects.md).

A validator accepts exactly what it accepted before (a default is an annotation, not a rule).

An output schema (:func:`compact_output_schema`) goes further, because it is read, not obeyed: a
client checks an answer against it and the model reads the answer itself, whose field names and
values say what most fields are and hold. So it lists only the keys of the answer that carry a
note: the key's own description, then every note written on the fields of the objects inside it
(``seats.available: 0 or less: full``), and its ``enum``. What goes is the structure the answer
shows anyway: types (a note says what a null means), property lists, the keys nobody wrote a note
for, the models' docstrings (written for developers), the ``required`` lists (seed 000's rule that
``required`` names no key that can be missing still holds), and a note said already on a field of
the same name under another key of the same answer (the untrusted display name of a friend, of a
request received and of a request sent is one note). Every distinct word a plugin wrote for the
model stays once; an answer that held to the full schema holds to this one (it only constrains
less), so the SDK's check of structured content still passes.
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
# to its own type alone (a format or a length to strings, a bound to numbers, items to arrays), so
# the union means the same. Not ``enum`` or ``const``: they would refuse the null.
_FOLDABLE = frozenset(
    {"type", "format", "items", "minLength", "maxLength", "pattern", "minimum", "maximum", "minItems", "maxItems"}
    | {"exclusiveMinimum", "exclusiveMaximum"}
)


def compact_schema(schema: Mapping[str, Any], *, fold_nullable: bool = True) -> dict[str, Any]:
    """``schema`` without the keywords that add bytes and no meaning (see the module).
    ``fold_nullable``: write a nullable type as a ``type`` list (False for an input schema)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key == "default" and value is None:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                name: compact_schema(inner, fold_nullable=fold_nullable) if isinstance(inner, Mapping) else inner
                for name, inner in value.items()
            }
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [
                compact_schema(inner, fold_nullable=fold_nullable) if isinstance(inner, Mapping) else inner
                for inner in value
            ]
        elif key in _SCHEMA_VALUES and isinstance(value, Mapping):
            out[key] = compact_schema(value, fold_nullable=fold_nullable)
        else:
            out[key] = value
    return _fold_nullable(out) if fold_nullable else out


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


def compact_output_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` of an answer, compact: only the keys with a note, each note once (see the module)."""
    compact = compact_schema(schema)
    definitions: Mapping[str, Any] = compact.get("$defs", {})
    left_out = ("$defs", "description", "properties", "required")
    out = {key: value for key, value in compact.items() if key not in left_out}
    said: set[tuple[str, str]] = set()
    properties: dict[str, Any] = {}
    for name, field in compact.get("properties", {}).items():
        noted = _loose(field, definitions, said)
        if noted:
            properties[name] = noted
    out["properties"] = properties
    return out


# What a key of an answer keeps besides its notes: the values it can take, which a model acts on.
_KEPT_WITH_NOTES = ("enum", "const")


def _loose(field: Mapping[str, Any], definitions: Mapping[str, Any], said: set[tuple[str, str]]) -> dict[str, Any]:
    """One key of an answer: its description and its objects' fields' notes, each note not said
    already on another key of the answer (``said``, updated), and its enum; {} when none is left.
    Its type goes: the answer shows it, and a note says what a null means."""
    fresh: list[str] = []
    for path, text in _notes_in(field, definitions):
        # The same note on a field of the same name (display_name.untrusted_text in the friends,
        # then in the requests received and sent): said once is enough.
        seen = (path.rsplit(".", 1)[-1], text)
        if seen not in said:
            said.add(seen)
            fresh.append(f"{path}: {text}")
    out: dict[str, Any] = {key: field[key] for key in _KEPT_WITH_NOTES if key in field}
    own = field.get("description", "")
    described = "; ".join(fresh)
    if own and described:
        out["description"] = f"{own} {described}."
    elif own or described:
        out["description"] = own or f"{described}."
    return out


def _notes_in(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(path, note) for every described field of the objects ``schema`` holds (itself, its list's
    items, its map's values, a nullable object's ``anyOf``)."""
    target = _object_of(schema, definitions)
    if target is not None:
        return _field_notes(target, definitions, "", frozenset())
    notes: list[tuple[str, str]] = []
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            notes.extend(_notes_in(schema[key], definitions))
    for member in schema.get("anyOf", []):
        if isinstance(member, Mapping):
            notes.extend(_notes_in(member, definitions))
    return notes


def _object_of(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object ``schema`` describes with properties (through ``$ref`` or inline), else None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = definitions.get(ref.removeprefix("#/$defs/"))
        return target if isinstance(target, Mapping) else None
    return schema if isinstance(schema.get("properties"), Mapping) else None


def _field_notes(
    target: Mapping[str, Any], definitions: Mapping[str, Any], prefix: str, seen: frozenset[int]
) -> list[tuple[str, str]]:
    """(path, description) for every described field inside ``target``, its objects' fields included."""
    if id(target) in seen:  # a model that contains itself
        return []
    seen = seen | {id(target)}
    notes: list[tuple[str, str]] = []
    for name, field in target.get("properties", {}).items():
        if not isinstance(field, Mapping):
            continue
        description = field.get("description")
        if isinstance(description, str) and description:
            notes.append((f"{prefix}{name}", description.rstrip(".")))
        for inner in _inner_schemas(field):
            nested = _object_of(inner, definitions)
            if nested is not None:
                notes.extend(_field_notes(nested, definitions, f"{prefix}{name}.", seen))
    return notes


def _inner_schemas(field: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``field`` itself, what its list holds, and its ``anyOf`` members (a nullable object)."""
    found = [field]
    for member in field.get("anyOf", []):
        if isinstance(member, Mapping):
            found.extend(_inner_schemas(member))
    for key in ("items", "additionalProperties"):
        if isinstance(field.get(key), Mapping):
            found.extend(_inner_schemas(field[key]))
    return found
