"""The campus id rule (campus_mcp.oauth.campus_id) that OIDC, SAML and CAS sign-ins share: one
value, taken whole, of the campus's form; control, invisible and look-alike characters refused with
words that name the character. The sign-ins through the real providers are in test_oidc_provider.py,
test_saml_idp.py and test_cas_server.py."""

from __future__ import annotations

import pytest
from campus_mcp.oauth.campus_id import CampusIdRefused, campus_id_problem, checked_campus_id
from campus_mcp.settings import Settings
from pydantic import ValidationError

REFUSED = {
    "s2001 attacker": "contains a space",
    "s2001 ": "contains a space",
    " s2001": "contains a space",
    "s2001\tx": "contains a control character (U+0009)",
    "s2001\u2003x": "contains whitespace (U+2003 EM SPACE)",
    "s2001\u00a0": "contains whitespace (U+00A0 NO-BREAK SPACE)",
    "s2001\u200b": "contains an invisible character (U+200B ZERO WIDTH SPACE)",
    "s2001\u202e": "contains an invisible character (U+202E RIGHT-TO-LEFT OVERRIDE)",
    "s2001\u2060": "contains an invisible character (U+2060 WORD JOINER)",
    "s2001\x00": "contains a control character (U+0000)",
    "s2001\x1b[31m": "contains a control character (U+001B)",
    "s2001\n": "contains a control character (U+000A)",
    "\uff53\uff12\uff10\uff10\uff11": "(U+FF53 FULLWIDTH LATIN SMALL LETTER S), which looks like s",
    "\u0455tudent": "(U+0455 CYRILLIC SMALL LETTER DZE), which looks like a Latin letter",
    "\u0455\u04352001": "(U+0455 CYRILLIC SMALL LETTER DZE), which is not plain ASCII",
    "x" * 65: "is 65 characters long; a student id here is printable ASCII characters without spaces, at most 64",
}


@pytest.mark.parametrize("value", sorted(REFUSED))
def test_each_unsafe_id_is_refused_naming_the_problem(value: str) -> None:
    problem = campus_id_problem(value)
    assert problem is not None and REFUSED[value] in problem, problem


@pytest.mark.parametrize("value", ["s2001", "S1001", "ada@campus.example", "a.lovelace-2", "x" * 64, "12345"])
def test_ordinary_ids_pass(value: str) -> None:
    assert campus_id_problem(value) is None


def test_an_id_is_taken_whole_never_split_and_one_value_only() -> None:
    settings = Settings(oidc_help_contact="the help desk")
    assert checked_campus_id(["s2001"], source="the uin claim", settings=settings) == "s2001"
    assert checked_campus_id(["s2001", "s2001"], source="the uin claim", settings=settings) == "s2001"
    with pytest.raises(CampusIdRefused, match=r"\(the uin claim\) contains a space, so this sign-in was refused"):
        checked_campus_id(["s2001 attacker"], source="the uin claim", settings=settings)
    with pytest.raises(CampusIdRefused, match="sent 2 different student ids"):
        checked_campus_id(["s2001", "s2002"], source="the uin claim", settings=settings)
    with pytest.raises(CampusIdRefused, match=r"did not tell this service your student id .* Ask the help desk"):
        checked_campus_id([], source="the uin claim", settings=settings)


def test_the_campus_pattern_narrows_the_form_and_the_character_rules_stay() -> None:
    pattern = r"[Ss]\d{4,9}"
    assert campus_id_problem("S1001", pattern) is None
    assert campus_id_problem("ada", pattern) == (
        "does not have the form of a student id on this campus (CAMPUS_MCP_CAMPUS_ID_PATTERN)"
    )
    # A pattern that allows anything still does not let an invisible or look-alike character in.
    assert campus_id_problem("S1001\u200b", ".*") == "contains an invisible character (U+200B ZERO WIDTH SPACE)"
    assert "CYRILLIC" in str(campus_id_problem("\u0455tudent", ".*"))
    assert campus_id_problem("s2001 x", ".*") == "contains a space"


def test_a_pattern_that_is_not_a_regular_expression_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="CAMPUS_MCP_CAMPUS_ID_PATTERN is not a regular expression"):
        Settings(campus_id_pattern="[unclosed")
