"""similar_sections when one similar course has many sections in the term (a large campus's
big lecture course, or ~240 sections of a course at ``--scale 67``): the answer still lists
``limit`` sections of distinct courses, best course first, one section of each."""

from __future__ import annotations

from typing import Any

from campus_catalog.models import Course, Section
from campus_catalog.queries.terms import resolve_term
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import func, select

LIMIT = 3


async def _similar(campus: CampusHarness, crn: str, limit: int) -> dict[str, Any]:
    result = await campus.call("similar_sections", {"crn": crn, "limit": limit}, scopes=["catalog"])
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer is not None and answer["method"] == "meaning", answer
    return answer


async def test_a_course_with_more_sections_than_were_ranked_leaves_room_for_others(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(demo=True)
    async with campus.sessions() as session:
        term = await resolve_term(session, None, campus.settings)
        # A course with one section in the term: its answer is all other courses (a course's own
        # open sections come first, and would take the page here).
        single = (
            select(Section.course_id)
            .where(Section.term_id == term.id)
            .group_by(Section.course_id)
            .having(func.count() == 1)
        )
        crn = await session.scalar(
            select(Section.crn)
            .join(Course, Course.id == Section.course_id)
            .where(
                Section.term_id == term.id,
                Course.subject_code == "FINC",
                Section.title.is_(None),
                Section.course_id.in_(single),
            )
            .order_by(Section.crn)
            .limit(1)
        )
    assert crn is not None
    before = await _similar(campus, crn, LIMIT)
    assert len(before["sections"]) == LIMIT, before
    best_code = before["sections"][0]["course_code"]

    # The best similar course gets many more untitled sections in the term (its vector, no
    # title of their own) than limit * 8, the depth the ranking used to stop at.
    subject, number = best_code.split()
    async with campus.sessions() as session:
        course_id, vector = (
            await session.execute(
                select(Course.id, Course.embedding).where(
                    Course.subject_code == subject, Course.course_number == number
                )
            )
        ).one()
        highest = int(await session.scalar(select(func.max(Section.crn))) or 0)
        session.add_all(
            Section(
                term_id=term.id,
                course_id=course_id,
                crn=str(highest + n),
                section_number=f"B{n:02d}",
                credits_min=3,
                credits_max=3,
                capacity=30,
                enrolled=0,
                seats_available=30,
                embedding=vector,
            )
            for n in range(1, LIMIT * 8 + 11)
        )
        await session.commit()

    after = await _similar(campus, crn, LIMIT)
    codes = [s["course_code"] for s in after["sections"]]
    assert len(codes) == LIMIT and len(set(codes)) == LIMIT, codes
    # The same courses as before, in the same order: the new sections add none, and the big
    # course's first section (by id) still stands for it.
    assert codes == [s["course_code"] for s in before["sections"]], (codes, before)
    assert [s["crn"] for s in after["sections"]] == [s["crn"] for s in before["sections"]]
