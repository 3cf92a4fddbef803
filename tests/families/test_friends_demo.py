"""The friends demo data on a demo campus with fewer students than the friend circle names."""

from __future__ import annotations

from campus_mcp.testing import CampusFactory


async def test_a_small_demo_campus_keeps_the_friendships_it_has_students_for(campus_factory: CampusFactory) -> None:
    # student4 and student5 do not exist: their requests are left out, not a foreign-key error.
    # Named plugins: the shared demo template (5 students) is not copied, the demo is loaded afresh.
    campus = await campus_factory(plugins=["catalog", "schedule", "friends"], demo=True, demo_students=3)
    listed = (
        await campus.call("list_friends", {}, principal=await campus.student_principal("student1"))
    ).structured_content
    assert listed is not None
    assert [f["username"] for f in listed["friends"]] == ["student2", "student3"]
    assert listed["requests_received"] == [] and listed["requests_sent"] == []
