"""The term a planning prompt means when the student names none (seed 000, "Prompts").

A prompt reads no student data, so these rules give the model a term to start from and say how
to confirm it. ``today`` is an argument, so a test can fix the campus date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class TermDates:
    uid: str
    name: str
    start_date: date
    end_date: date

    @property
    def label(self) -> str:
        return f"{self.name} ({self.uid})"


def _is_summer(term: TermDates) -> bool:
    # Campuses name their summer terms "Summer 2027" (Banner codes differ from campus to campus).
    return "summer" in term.name.casefold()


def next_fall_or_spring(terms: Sequence[TermDates], today: date) -> TermDates | None:
    """The next term that starts after today and is not a summer term: a student in March
    registers for fall, not for summer."""
    upcoming = [t for t in terms if t.start_date > today and not _is_summer(t)]
    return min(upcoming, key=lambda t: t.start_date) if upcoming else None


def current(terms: Sequence[TermDates], today: date) -> TermDates | None:
    running = [t for t in terms if t.start_date <= today <= t.end_date]
    return max(running, key=lambda t: t.start_date) if running else None


def upcoming(terms: Sequence[TermDates], today: date) -> TermDates | None:
    later = [t for t in terms if t.start_date > today]
    return min(later, key=lambda t: t.start_date) if later else None


def planning_term_line(terms: Sequence[TermDates], today: date) -> str:
    """plan_term_schedule and find_class_for_free_time: the next fall or spring term, confirmed."""
    term = next_fall_or_spring(terms, today)
    if term is None:
        return (
            "Term: the student named none, and the catalog lists no coming fall or spring term. Call list_terms "
            "and ask the student which term they mean."
        )
    return (
        f"Term: the student named none, so start from the next fall or spring term, {term.label}. Confirm this "
        "term with the student before you plan."
    )


def check_term_line(terms: Sequence[TermDates], today: date) -> str:
    """check_my_schedule: the next term if the student has courses in it, else the current term."""
    following, now = upcoming(terms, today), current(terms, today)
    if following is not None and now is not None:
        return (
            f"Term: the student named none. Call my_courses for the next term, {following.label}; if it gives no "
            f"course, check the current term, {now.label}, instead."
        )
    only = following or now
    if only is not None:
        return f"Term: the student named none, so check {only.label}."
    return "Term: the student named none, and the catalog lists no current or coming term. Call list_terms and ask the student."
