"""What a dynamic client registration (RFC 7591) may hold: types and sizes, field by field.

Registration is open (MCP clients register themselves, without an initial access token), so
these caps are what keeps one caller from filling the database or the consent page. A real
registration is well under 2 KB: one name, two or three redirect URIs, a scope list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from campus_mcp.oauth.redirects import redirect_uri_problem
from campus_mcp.untrusted import hidden_character

# The whole JSON body. Room for the largest registration the caps below allow (ten redirect
# URIs of 2,000 characters), and nothing more is read.
MAX_BODY_BYTES = 32 * 1024
# One app needs a few: loopback ports a desktop client tries, a web callback, a mobile one.
MAX_REDIRECT_URIS = 10
# The width of the redirect_uri and client_uri columns; longer is no URL an app means.
MAX_URI_CHARS = 2000
# The app's name is the heading of the consent page; 200 characters already wrap twice.
MAX_NAME_CHARS = 200
# Scope names of this server joined by spaces stay far below this.
MAX_SCOPE_CHARS = 2000
# An e-mail address is at most 254 characters (RFC 5321); room for a display name.
MAX_CONTACT_CHARS = 320
# contacts, grant_types, response_types: a handful each.
MAX_LIST_ITEMS = 10
# A client registers once per installation; a campus network behind one address holds many
# installations, so the limit is generous, yet far from the 200 in 11 s of a flood.
REGISTRATIONS_PER_ADDRESS = 20
REGISTRATION_WINDOW_SECONDS = 600

# The string fields of RFC 7591 section 2 and the longest each may be.
STRING_FIELDS: Mapping[str, int] = {
    "client_name": MAX_NAME_CHARS,
    "client_uri": MAX_URI_CHARS,
    "logo_uri": MAX_URI_CHARS,
    "tos_uri": MAX_URI_CHARS,
    "policy_uri": MAX_URI_CHARS,
    "jwks_uri": MAX_URI_CHARS,
    "scope": MAX_SCOPE_CHARS,
    "software_id": MAX_NAME_CHARS,
    "software_version": MAX_NAME_CHARS,
    "token_endpoint_auth_method": MAX_NAME_CHARS,
    "software_statement": MAX_URI_CHARS,
}
# The list-of-strings fields (redirect_uris has rules of its own) and the longest item of each.
LIST_FIELDS: Mapping[str, int] = {
    "grant_types": MAX_NAME_CHARS,
    "response_types": MAX_NAME_CHARS,
    "contacts": MAX_CONTACT_CHARS,
}


@dataclasses.dataclass(frozen=True)
class MetadataProblem:
    """Why a registration is refused; ``redirect`` picks ``invalid_redirect_uri`` (RFC 7591 3.2.2)."""

    description: str
    redirect: bool = False


def metadata_problem(data: Mapping[str, Any]) -> MetadataProblem | None:
    """The first thing wrong with the client metadata ``data``, or None."""
    problem = _redirect_uris_problem(data.get("redirect_uris"))
    if problem:
        return MetadataProblem(problem, redirect=True)
    for field, longest in STRING_FIELDS.items():
        value = data.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            return MetadataProblem(f"{field} must be a string, not {_json_type(value)}.")
        if len(value) > longest:
            return MetadataProblem(f"{field} is {len(value):,} characters long; at most {longest:,} are accepted.")
        if (problem := text_problem(field, value)) is not None:
            return MetadataProblem(problem)
    for field, longest in LIST_FIELDS.items():
        value = data.get(field)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return MetadataProblem(f"{field} must be a list of strings.")
        if len(value) > MAX_LIST_ITEMS:
            return MetadataProblem(f"{field} has {len(value):,} entries; at most {MAX_LIST_ITEMS} are accepted.")
        if any(len(item) > longest for item in value):
            return MetadataProblem(f"Each entry of {field} may be at most {longest:,} characters long.")
        if (problem := next(filter(None, (text_problem(field, item) for item in value)), None)) is not None:
            return MetadataProblem(problem)
    if "jwks" in data and not isinstance(data["jwks"], dict):
        return MetadataProblem(f"jwks must be a JSON object, not {_json_type(data['jwks'])}.")
    return None


def text_problem(field: str, value: Any) -> str | None:
    """Why the string ``value`` of ``field`` cannot be registered, or None. The app's name heads
    the consent page and is repeated in the student's activity page, the access log and
    ``campus-mcp audit``: a line break, a control character (an ANSI escape) or a direction
    override (U+202E) in it would forge a row or make it read as another app's; no other field
    (a URI, a scope, a version) has a use for one either, and PostgreSQL cannot store a NUL. The
    rule is the one for text students write (campus_mcp.untrusted); here it refuses, so the
    app's developer corrects the metadata."""
    if not isinstance(value, str):
        return None
    hidden = hidden_character(value)
    if hidden is None:
        return None
    return (
        f"{field} holds {hidden}, which is not shown as itself on one line. Register it as one line "
        "of visible characters: no line breaks, control or direction characters."
    )


def _redirect_uris_problem(uris: Any) -> str | None:
    if not isinstance(uris, list) or not uris:
        return "Register at least one redirect URI: redirect_uris must be a list of URL strings."
    if len(uris) > MAX_REDIRECT_URIS:
        return f"redirect_uris has {len(uris):,} entries; register at most {MAX_REDIRECT_URIS}."
    for uri in uris:
        if not isinstance(uri, str):
            return f"redirect_uris must be a list of strings; one entry is {_json_type(uri)}."
        if len(uri) > MAX_URI_CHARS:
            return f"A redirect URI is {len(uri):,} characters long; at most {MAX_URI_CHARS:,} characters are accepted."
        problem = redirect_uri_problem(uri)
        if problem:
            return problem[0].upper() + problem[1:] + "."
    return None


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, for an error a developer reads."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"
