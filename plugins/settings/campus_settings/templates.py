"""Event templates (seed 000, issue 12 point 3): a student's title, description and location
templates are data, never code.

A template is plain text with ``{{name}}`` placeholders, and ``name`` must be on the allow list
below. There is no attribute access, no index, no filter, no format spec, no expression: the
only thing between the braces is one allowed name, with spaces around it if the student likes.
Anything else that looks like a placeholder is refused at save, with the list of names allowed,
so a template never reaches the renderer that the renderer would read differently from the
student. Rendering is one ``re.sub`` over that same grammar, replacing each name by its value's
text: nothing a template holds is ever evaluated.

Both the template and the rendered text have length caps, and control characters are removed
(a description keeps its line breaks, a title or location is one line).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Literal

from campus_mcp import InvalidInput

TemplateField = Literal["title_template", "description_template", "location_template"]
TEMPLATE_FIELDS: tuple[TemplateField, ...] = ("title_template", "description_template", "location_template")

# The names a template may use, with what each gives (my_calendar_settings lists them).
VARIABLES: dict[str, str] = {
    "course_code": "The course code, such as 'COMP 2350'.",
    "title": "The course title (a university event's or exam's title for those events).",
    "type": "The kind of class: Lecture, Laboratory, Studio, Seminar, ... ('Final exam' for an exam).",
    "subject": "The subject code, such as 'COMP'.",
    "course_number": "The course number, such as '2350'.",
    "section": "The section number, such as '01'.",
    "crn": "The CRN of the section.",
    "instructor": "The instructors, primary first, separated by commas.",
    "building": "The building code.",
    "building_name": "The building's full name.",
    "room": "The room.",
    "day": "The weekday of the meeting, such as 'Monday'.",
    "start_time": "The start time on a 12-hour clock, such as '10:00 AM'.",
    "end_time": "The end time on a 12-hour clock.",
    "term": "The term's name, such as 'Fall 2026'.",
    "credits": "The credits of the section.",
    "category": "A university event's category, such as 'holiday'.",
}
# One placeholder: exactly the grammar the renderer understands.
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
# What a student may mean as a placeholder: any double brace, or a Jinja/Liquid tag.
LOOKS_LIKE_CODE = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}")
MAX_TEMPLATE = {"title_template": 200, "description_template": 1000, "location_template": 200}
MAX_RENDERED = {"title_template": 300, "description_template": 4000, "location_template": 300}
LABELS = {"title_template": "title", "description_template": "description", "location_template": "location"}


def clean_text(text: str, *, keep_newlines: bool) -> str:
    """``text`` without control characters (Unicode category C*, which covers bidi overrides and
    zero-width marks too); a newline stays only where ``keep_newlines`` allows, else it is a space,
    and a line or paragraph separator (U+2028, U+2029) is always a space."""
    out: list[str] = []
    for char in text.replace("\r\n", "\n"):
        if char == "\n":
            out.append("\n" if keep_newlines else " ")
        elif char == "\t" or unicodedata.category(char) in {"Zl", "Zp"}:
            # U+2028/U+2029 break a line in the question and the feed as a newline would.
            out.append(" ")
        elif unicodedata.category(char).startswith("C"):
            continue
        else:
            out.append(char)
    return "".join(out)


def allowed_names() -> str:
    return ", ".join(f"{{{{{name}}}}}" for name in VARIABLES)


def check_template(field: TemplateField, template: str) -> str:
    """The template as it is stored (control characters removed), or an InvalidInput saying what
    is wrong and what to use instead. An empty result means "not set" (the level below applies)."""
    limit = MAX_TEMPLATE[field]
    if len(template) > limit:
        raise InvalidInput(
            f"The {LABELS[field]} template has {len(template):,} characters; at most {limit} are allowed. Shorten it.",
            field=field,
        )
    text = clean_text(template, keep_newlines=field == "description_template").strip()
    unknown: list[str] = []
    for match in PLACEHOLDER.finditer(text):
        if match.group(1) not in VARIABLES:
            unknown.append(match.group(1))
    if unknown:
        names = ", ".join(dict.fromkeys(f"{{{{{name}}}}}" for name in unknown))
        raise InvalidInput(
            f"The {LABELS[field]} template uses {names}, which is not a template variable. "
            f"The names allowed are: {allowed_names()}.",
            field=field,
        )
    rest = PLACEHOLDER.sub("", text)
    stray = LOOKS_LIKE_CODE.search(rest)
    if stray is not None:
        start = max(0, stray.start() - 10)
        excerpt = rest[start : stray.end() + 20]
        raise InvalidInput(
            f"The {LABELS[field]} template has {excerpt!r}, which is not a placeholder. A placeholder is one "
            "name in double braces, such as {{course_code}}, with no dots, brackets, filters or formats. "
            f"The names allowed are: {allowed_names()}.",
            field=field,
        )
    return text


def render(field: TemplateField, template: str, values: Mapping[str, str | None]) -> str:
    """The text of a stored template for one event. A name the event has no value for gives ''.
    The values are cleaned like the template (a room name cannot add a line to a title), and the
    result is cut at the field's cap."""
    keep = field == "description_template"

    def value_of(match: re.Match[str]) -> str:
        return clean_text(values.get(match.group(1)) or "", keep_newlines=keep)

    text = PLACEHOLDER.sub(value_of, clean_text(template, keep_newlines=keep))
    text = re.sub(r"[ ]{2,}", " ", text).strip()
    return text[: MAX_RENDERED[field]]
