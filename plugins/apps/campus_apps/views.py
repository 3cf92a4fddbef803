"""The four MCP Apps views of seed 000 and the tools each one draws.

A template is one HTML file in ``templates/`` with inline CSS and JavaScript. The shared colors,
type and course colors (``shared/base.css``) and the host bridge and time helpers
(``shared/app.js``) come in by include lines, expanded when the view is served, so every view
stays one self-contained document that loads nothing from the network.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from campus_mcp import AppResource

TEMPLATES = Path(__file__).parent / "templates"
# ``/* @include shared/base.css */`` or ``// @include shared/app.js``, alone on its line.
INCLUDE = re.compile(r"^[ \t]*(?:/\*|//)[ \t]*@include[ \t]+(shared/[\w.-]+)[ \t]*(?:\*/)?[ \t]*$", re.MULTILINE)
URI_PREFIX = "ui://campus-mcp/"


@dataclasses.dataclass(frozen=True)
class View:
    key: str
    title: str
    description: str
    tools: tuple[str, ...]


VIEWS = (
    View(
        "week-grid",
        "Week grid",
        "A week of classes; check_schedule marks the conflicts of a plan.",
        ("check_schedule", "my_courses"),
    ),
    View(
        "busy-times",
        "Busy times",
        "A student's or a friend's busy blocks, day by day (a friend's show no course).",
        ("my_busy_times", "friend_busy_times"),
    ),
    View(
        "catalog",
        "Catalog",
        "Sections with their times, rooms, instructors and open seats; a course; an instructor.",
        ("search_sections", "similar_sections", "get_section", "get_course", "get_instructor"),
    ),
    View("finals", "Final exams", "The student's final exams in date order.", ("my_finals",)),
)


def expand(text: str) -> str:
    """The template with each include line replaced by the shared file it names."""

    def include(match: re.Match[str]) -> str:
        path = (TEMPLATES / match.group(1)).resolve()
        if path.parent != (TEMPLATES / "shared").resolve() or not path.is_file():
            raise FileNotFoundError(f"include of a file that is not in templates/shared: {match.group(1)!r}")
        return path.read_text(encoding="utf-8").rstrip("\n")

    return INCLUDE.sub(include, text)


@functools.cache
def render(key: str) -> str:
    # The files ship with the package and change only on a deploy: read and expand once.
    return expand((TEMPLATES / f"{key}.html").read_text(encoding="utf-8"))


def app_resources() -> list[AppResource]:
    return [
        AppResource(
            uri=URI_PREFIX + view.key,
            name=view.key,
            title=view.title,
            description=view.description,
            html=functools.partial(render, view.key),
            tools=view.tools,
        )
        for view in VIEWS
    ]
