"""The campus student id a campus sign-in vouches for (OpenID Connect, SAML, CAS): one value, taken
whole, of the form the campus set.

The id links a sign-in to a student record, the enrollment feed's rows of a student who has not
signed in yet among them, so it is taken exactly as the provider sent it: never cut at a space
(``"s2001 attacker"`` is not ``s2001``), never picked from several values. It must match
``campus_id_pattern`` (default: printable ASCII without whitespace, at most 64 characters), and
whatever the pattern allows, these are refused: control characters, invisible ones (zero-width
characters, direction overrides), whitespace, and look-alikes (a character whose compatibility
form is another one, such as a fullwidth ``ｓ``, or Latin letters mixed with another script's, such
as a Cyrillic ``а``). The refusal names the character by its code point and Unicode name; the id
itself is never echoed (an invisible or direction-changing character would garble the page).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from campus_mcp.settings import Settings

DEFAULT_PATTERN = r"[\x21-\x7e]{1,64}"
DEFAULT_FORM = "printable ASCII characters without spaces, at most 64 of them"
# What the database column holds with the suffix a clashing username gets (accounts.oidc_student),
# whatever a campus's pattern allows.
MAX_LENGTH = 128


class CampusIdRefused(ValueError):
    """Why the id the provider sent cannot name a student here, in words for the person."""


def _named(character: str) -> str:
    code = f"U+{ord(character):04X}"
    name = unicodedata.name(character, "")
    return f"{code} {name}" if name else code


def _script(character: str) -> str:
    """The script of a letter, as the first word of its Unicode name (LATIN, CYRILLIC, GREEK...)."""
    return unicodedata.name(character, "?").split(" ", 1)[0]


def character_problem(value: str) -> str | None:
    """What makes ``value`` unsafe as an id whatever the campus's pattern (None: nothing)."""
    for character in value:
        category = unicodedata.category(character)
        if category == "Cc":
            return f"contains a control character ({_named(character)})"
        if category in ("Cf", "Co", "Cn", "Cs"):
            return f"contains an invisible character ({_named(character)})"
        if character.isspace() or category.startswith("Z"):
            return "contains a space" if character == " " else f"contains whitespace ({_named(character)})"
        if unicodedata.normalize("NFKC", character) != character:
            plain = unicodedata.normalize("NFKC", character)
            return f"contains the character {character} ({_named(character)}), which looks like {plain}"
    scripts = {_script(c) for c in value if unicodedata.category(c).startswith("L")}
    if "LATIN" in scripts and len(scripts) > 1:
        other = next(c for c in value if unicodedata.category(c).startswith("L") and _script(c) != "LATIN")
        return f"mixes Latin letters with the character {other} ({_named(other)}), which looks like a Latin letter"
    return None


def campus_id_problem(value: str, pattern: str = DEFAULT_PATTERN) -> str | None:
    """Why ``value`` cannot be a campus id under ``pattern``, in words (None: it can)."""
    if not value:
        return "is empty"
    problem = character_problem(value)
    if problem:
        return problem
    if len(value) > MAX_LENGTH:
        return f"is {len(value)} characters long; a student id here has at most {MAX_LENGTH}"
    if re.fullmatch(pattern, value):
        return None
    if pattern == DEFAULT_PATTERN:
        foreign = next((c for c in value if not c.isascii()), None)
        if foreign is not None:
            return (
                f"contains the character {foreign} ({_named(foreign)}), which is not plain ASCII: "
                "it can pass for another letter"
            )
        return f"is {len(value)} characters long; a student id here is {DEFAULT_FORM}"
    return "does not have the form of a student id on this campus (CAMPUS_MCP_CAMPUS_ID_PATTERN)"


def checked_campus_id(values: Sequence[str], *, source: str, settings: Settings) -> str:
    """The one campus id in ``values`` (the claim's or attribute's values, as sent), checked;
    CampusIdRefused naming ``source`` ("the uin claim") and whom to ask otherwise. An id is never
    trimmed or split: a value with a space in it (or around it) is refused, not cut."""
    ask = settings.oidc_help_contact
    distinct = list(dict.fromkeys(values))
    if not distinct or distinct == [""]:
        raise CampusIdRefused(
            f"Your campus account did not tell this service your student id ({source}). "
            f"Ask {ask} to release it to this service."
        )
    if len(distinct) > 1:
        raise CampusIdRefused(
            f"Your campus account sent {len(distinct)} different student ids ({source}), so this service "
            f"cannot tell which one is yours. Ask {ask} to check your account."
        )
    problem = campus_id_problem(distinct[0], settings.campus_id_pattern)
    if problem:
        raise CampusIdRefused(
            f"Your campus account's student id ({source}) {problem}, so this sign-in was refused. "
            f"Ask {ask} to check your account."
        )
    return distinct[0]
