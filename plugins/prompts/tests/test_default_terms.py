"""The term a planning prompt starts from when the student names none (seed 000, "Prompts"),
with the campus date fixed: next fall or spring, skipping summer; check_my_schedule's rule."""

from __future__ import annotations

from datetime import date

from campus_prompts.terms import TermDates, check_term_line, planning_term_line

TERMS = [
    TermDates("202620", "Spring 2026", date(2026, 1, 12), date(2026, 5, 1)),
    TermDates("202630", "Summer 2026", date(2026, 5, 18), date(2026, 8, 14)),
    TermDates("202710", "Fall 2026", date(2026, 9, 8), date(2026, 12, 18)),
    TermDates("202720", "Spring 2027", date(2027, 1, 11), date(2027, 4, 30)),
]


def test_a_student_in_march_plans_for_fall_not_summer() -> None:
    line = planning_term_line(TERMS, date(2026, 3, 15))
    assert "Fall 2026 (202710)" in line and "Summer" not in line and "Confirm" in line


def test_in_the_fall_the_next_planning_term_is_spring() -> None:
    assert "Spring 2027 (202720)" in planning_term_line(TERMS, date(2026, 10, 1))


def test_no_coming_fall_or_spring_asks_the_student() -> None:
    assert "list_terms" in planning_term_line(TERMS, date(2027, 2, 1))


def test_check_my_schedule_tries_the_next_term_then_the_current_one() -> None:
    line = check_term_line(TERMS, date(2026, 3, 15))
    assert line.index("Summer 2026 (202630)") < line.index("Spring 2026 (202620)")
    assert "my_courses" in line
    # Between terms there is no current term: the next one is the term to check.
    assert check_term_line(TERMS, date(2026, 8, 20)) == "Term: the student named none, so check Fall 2026 (202710)."
