"""The catalog's surface for the other families: what the schedule, settings and prompts families
(and a campus's own plugin) may build on, so the catalog can move its insides without breaking them.

A family that builds on the catalog declares ``depends_on=("catalog",)`` and imports from here only;
``pyproject.toml``'s import contracts hold every family to it. What is here:

- the catalog's tables (:class:`Term`, :class:`Section`, :class:`MeetingTime`, ...);
- the campus's clock and terms (:func:`campus_today`, :func:`campus_moment`, :func:`resolve_term`, ...);
- the campus's own rules (:class:`CampusRules`), seats' freshness, the student record readers;
- loading sections and their finals, conflicts between sections, section keys and URIs;
- a section read as rows in one statement (:func:`parts_select`, :func:`parts_of`,
  :class:`SectionParts`) and what reads those rows (its credits, its final, its conflicts);
- the answer and argument bases of the catalog's tools, shared by the families' schemas;
- the catalog's settings (read with ``ToolContext.plugin_settings_of("catalog")``), its stale
  section refresh queue, its guarded feed fetch, and its ``campus-mcp import`` command group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from campus_catalog.campus_rules import CampusRules, campus_rules
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.freshness import seats_as_of
from campus_catalog.models import (
    DAY_LETTERS,
    Course,
    FinalExam,
    FinalsSchedule,
    Instructor,
    MeetingTime,
    Section,
    SectionInstructor,
    Subject,
    Term,
    UniversityEvent,
)
from campus_catalog.queries.clock import campus_moment, campus_today, hhmm
from campus_catalog.queries.schedule_check import find_conflicts, planned_section
from campus_catalog.queries.section_detail import exam_column, exam_out
from campus_catalog.queries.section_rows import SectionParts, json_list_text, parts_of, parts_select, row_credits
from campus_catalog.queries.sections import final_exam, section_key
from campus_catalog.queries.serialize import load_sections, section_credits
from campus_catalog.queries.terms import DatedTerm, all_terms, choose_term, current_and_future, resolve_term, term_ref
from campus_catalog.refresh_queue import queue_stale_sections
from campus_catalog.resources import section_uri
from campus_catalog.schemas import (
    FIRST_CALENDAR_DAY,
    LAST_CALENDAR_DAY,
    Answer,
    Arguments,
    Conflict,
    TermRef,
    normalize_crn,
)
from campus_catalog.sources.feed_fetch import fetch_feed
from campus_catalog.student_record import StudentRecord, register_student_record

if TYPE_CHECKING:
    import click


def import_group() -> click.Group:
    """The catalog's ``campus-mcp import`` command group, for a family's import command to join.
    Loaded on use: the catalog's command line (rich, its importers) stays out of a served worker."""
    from campus_catalog.cli import import_group as group

    return group


__all__ = [
    "DAY_LETTERS",
    "FIRST_CALENDAR_DAY",
    "LAST_CALENDAR_DAY",
    "Answer",
    "Arguments",
    "CampusRules",
    "CatalogSettings",
    "Conflict",
    "Course",
    "DatedTerm",
    "FinalExam",
    "FinalsSchedule",
    "Instructor",
    "MeetingTime",
    "Section",
    "SectionInstructor",
    "SectionParts",
    "StudentRecord",
    "Subject",
    "Term",
    "TermRef",
    "UniversityEvent",
    "all_terms",
    "campus_moment",
    "campus_rules",
    "campus_today",
    "choose_term",
    "current_and_future",
    "exam_column",
    "exam_out",
    "fetch_feed",
    "final_exam",
    "find_conflicts",
    "hhmm",
    "import_group",
    "json_list_text",
    "load_sections",
    "normalize_crn",
    "parts_of",
    "parts_select",
    "planned_section",
    "queue_stale_sections",
    "register_student_record",
    "resolve_term",
    "row_credits",
    "seats_as_of",
    "section_credits",
    "section_key",
    "section_uri",
    "term_ref",
]
