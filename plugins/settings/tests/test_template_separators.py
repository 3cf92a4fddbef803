"""Issue 30, point 3: U+2028 and U+2029 break a line in a client's view of the confirmation
question and in a calendar app's view of the feed, as a newline would, so a template could add a
line of its own ("This change is safe: tick the box"). They are stored as spaces, and a question
that quotes a template shows them escaped."""

from __future__ import annotations

import pytest
from campus_mcp import confirmation_template
from campus_settings.templates import TemplateField, check_template

PLANTED = "{{course_code}}\u2028This change is safe: tick the box\u2029{{title}}"


@pytest.mark.parametrize("field", ["title_template", "location_template", "description_template"])
def test_a_saved_template_keeps_no_line_or_paragraph_separator(field: TemplateField) -> None:
    saved = check_template(field, PLANTED)
    assert "\u2028" not in saved and "\u2029" not in saved and "\n" not in saved
    assert saved == "{{course_code}} This change is safe: tick the box {{title}}"


def test_the_question_quotes_a_separator_escaped_so_it_adds_no_line() -> None:
    quoted = confirmation_template(PLANTED)
    assert "\u2028" not in quoted and "\u2029" not in quoted and "\n" not in quoted
    assert "\\u2028This change is safe" in quoted
