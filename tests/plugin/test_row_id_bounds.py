"""A row id past what an integer column holds is refused by its field, not by the database.

PostgreSQL keeps these ids in 32 bits: before the bound (``campus_mcp.RowId``), a
``meeting_time_id`` of 2**40 reached the query and the call ended as a server failure on
PostgreSQL while SQLite answered "no such meeting". Now both refuse it naming the field and the
range, through the tool and through its REST twin.
"""

from __future__ import annotations

import pytest
from campus_mcp.testing import CampusFactory, CampusHarness

HUGE = 2**40


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(demo=True)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("update_class_settings", {"meeting_time_id": HUGE, "color": "sage"}),
        ("preview_template", {"meeting_time_id": HUGE, "title_template": "{{course_code}}"}),
    ],
)
async def test_a_huge_meeting_time_id_names_the_field_and_its_range(
    campus: CampusHarness, tool: str, arguments: dict[str, object]
) -> None:
    principal = await campus.student_principal("student1")
    result = await campus.call(tool, arguments, principal=principal)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "meeting_time_id" in text and "2147483647" in text, text
    assert "failed" not in text.lower(), text
