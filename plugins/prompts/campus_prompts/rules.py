"""The words every planning prompt carries (seed 000, "Prompts", "Registration overrides",
"Registration steps"). The campus words come from the settings: the advisor message from the
host's, the campus's registration rules from the catalog's (``campus_catalog.campus_rules``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from campus_catalog.api import CampusRules
from campus_mcp import Settings

ASK_RULE = (
    "Ask the student for any fact no tool gives (grades, class year, academic standing, plans, "
    "preferences); do not guess it."
)
PERMISSION_RULE = (
    "If a tool answers that it needs a permission, tell the student what its message says about adding the "
    "permission, and go on with the tools you have."
)


def quoted(value: str) -> str:
    """A student's argument, in double quotes with quotes and new lines escaped, so it reads as
    data and cannot end the sentence it is in (the host has cut it at 500 characters)."""
    return json.dumps(value, ensure_ascii=False)


def given(args: Mapping[str, str], name: str, label: str) -> str:
    if name in args:
        return f"{label}: {quoted(args[name])} (the student's words)."
    return f"{label}: not given; ask the student if you need it."


# In every planning prompt (issue 37 point 9): each of them can suggest a full section.
WAITLIST_RULE = (
    "For a full section with a waitlist, the student joins the waitlist before asking for a capacity override."
)


def override_rules(office: str) -> str:
    return (
        "Overrides: an override is not certain, so make plans that need none. Offer one option that needs an "
        "override only when no plan without one works, or when the student is stuck or worried; for it, name "
        f"the override and the course, and tell the student to ask {office}. {WAITLIST_RULE} For a time "
        "conflict, give the minutes of overlap (check_schedule gives the times of each conflict)."
    )


def registration_rules(rules: CampusRules) -> str:
    """The campus's registration rules (the demo campus's are Wentworth's; others set their own or get
    neutral words), then the rules every campus shares."""
    parts = [f"Registration: {rules.registration_long()}"]
    if rules.elective_rule:
        parts.append(rules.elective_rule)
    parts.append(rules.waitlists())
    parts.append(
        "Some prerequisites need a minimum grade: my_course_history has no grades, so ask the student for the grade."
    )
    return " ".join(parts)


def closing(settings: Settings) -> str:
    return f"{ASK_RULE} {PERMISSION_RULE}\n\n{settings.advisor_text}"
