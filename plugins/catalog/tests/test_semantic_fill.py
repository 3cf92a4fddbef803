"""Rows that an import stored without vectors get them, and can then be found by meaning."""

from __future__ import annotations

from datetime import date

from campus_catalog import models as m
from campus_catalog import semantic
from sqlalchemy import select


async def test_fill_missing_vectors_makes_imported_rows_searchable_by_meaning(campus_factory) -> None:  # type: ignore[no-untyped-def]
    campus = await campus_factory(plugins=["catalog"])
    async with campus.sessions() as session, session.begin():
        session.add(m.Subject(id=1, code="FINC", name="Finance"))
        session.add(m.Subject(id=2, code="BIOL", name="Biology"))
        session.add(
            m.Term(id=1, uid="202720", name="Spring 2027", start_date=date(2027, 1, 18), end_date=date(2027, 4, 30))
        )
        await session.flush()
        session.add_all(
            [
                m.Course(
                    id=1,
                    subject_code="FINC",
                    course_number="3300",
                    title="Investments",
                    description="How the stock market works: stocks, bonds and portfolios.",
                ),
                m.Course(
                    id=2,
                    subject_code="BIOL",
                    course_number="1100",
                    title="Cell Biology",
                    description="The structure and function of the cell.",
                ),
            ]
        )
        await session.flush()
        session.add_all(
            [
                m.Section(id=1, term_id=1, course_id=1, crn="20001", section_number="01"),
                m.Section(id=2, term_id=1, course_id=2, crn="20002", section_number="01"),
                m.Section(
                    id=3,
                    term_id=1,
                    course_id=2,
                    crn="20003",
                    section_number="02",
                    title="Special Topics: Cryptocurrency Trading",
                ),
                m.Instructor(id=1, pub_id="ins-a", name="Ada Lopez", department="Finance"),
            ]
        )
        await session.flush()
        session.add(m.SectionInstructor(section_id=1, instructor_id=1, is_primary=True))
        session.add(
            m.Review(id=1, instructor_id=1, posted_on=date(2026, 10, 1), text="Makes hard topics easy to follow.")
        )
        session.add(m.Review(id=2, instructor_id=1, posted_on=date(2026, 10, 2), text="The tests are brutal."))

    async with campus.sessions() as session, session.begin():
        filled = await semantic.fill_missing_vectors(session)
    assert filled == {"courses": 2, "sections": 3, "instructors": 1, "reviews": 2}

    async with campus.sessions() as session:
        course_vector, section_vector = (
            await session.execute(
                select(m.Course.embedding, m.Section.embedding)
                .join(m.Section, m.Section.course_id == m.Course.id)
                .where(m.Section.id == 2)
            )
        ).one()
        assert section_vector == course_vector  # a section without its own title shares its course's vector
        sections = await semantic.semantic_search(session, "sections", "trading bitcoin", limit=1)
        assert sections[0].id == 3  # the topics section is found by its own title
        stock = await semantic.semantic_search(session, "sections", "a class about the stock market", limit=1)
        assert stock[0].id == 1
        # The same through a search's own select of section ids, and with the best one left out.
        in_term = select(m.Section.id).where(m.Section.term_id == 1)
        ranked = await semantic.semantic_search(session, "sections", "trading bitcoin", within=in_term, limit=3)
        assert ranked[0].id == 3 and len(ranked) == 3
        rest = await semantic.semantic_search(session, "sections", "trading bitcoin", within=in_term, exclude_ids=[3])
        assert [m.id for m in rest] == [m.id for m in ranked[1:]]
        reviews = await semantic.semantic_search(session, "reviews", "explains clearly", limit=1)
        assert reviews[0].id == 1
        assert await semantic.semantic_search(session, "instructors", "investing", limit=1)

    async with campus.sessions() as session, session.begin():
        assert await semantic.fill_missing_vectors(session) == {
            "courses": 0,
            "sections": 0,
            "instructors": 0,
            "reviews": 0,
        }
