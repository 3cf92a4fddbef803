"""The demo campus's schedules (issue 11): a demo student has a current-term schedule and three
past terms behind it, so ``my_course_history`` shows a real history and not one term."""

from __future__ import annotations

from datetime import date

from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusHarness


async def test_student1s_history_has_the_current_term_and_three_past_terms_newest_first(
    demo_campus: CampusHarness,
) -> None:
    principal = await demo_campus.student_principal("student1")
    async with demo_campus.mcp(principal=principal) as client:
        result = await client.call_tool("my_course_history", {})
    assert not result.is_error, result.content
    terms = (result.structured_content or {})["terms"]
    today = campus_today(demo_campus.settings.timezone)
    names = [t["term"]["name"] for t in terms]
    starts = [date.fromisoformat(t["start_date"]) for t in terms]
    assert starts == sorted(starts, reverse=True), f"newest first: {names}"
    past = [t for t in terms if date.fromisoformat(t["end_date"]) < today]
    # The current term is the first one not over yet (between terms, the one about to start).
    current = [t for t in terms if date.fromisoformat(t["end_date"]) >= today][-1]
    assert current["courses"], names
    assert len(past) == 3, names
    assert all(t["courses"] for t in past), "every past term lists the courses taken"
