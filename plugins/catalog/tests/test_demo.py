"""The demo campus: what a student would expect to find in a real catalog is there, and it is the
same every time it is generated (apart from dates, which follow today)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import numpy as np
import pytest
from campus_catalog import models as m
from campus_catalog import semantic
from campus_catalog.demo import vectors
from campus_catalog.demo.calendar import terms_around
from campus_catalog.demo.generate import load_demo_catalog
from campus_mcp.testing import CampusHarness
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession


async def _count(session: AsyncSession, model: type[object], *where: object) -> int:
    statement = select(func.count()).select_from(model)
    for condition in where:
        statement = statement.where(condition)  # type: ignore[arg-type]
    return int((await session.execute(statement)).scalar_one())


async def test_the_demo_campus_has_the_promised_size(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        assert await _count(session, m.Subject) == 30
        assert await _count(session, m.Course) >= 150
        # 1,500 in the past, current and next terms, about 150 in each of the two older past terms.
        assert 1800 <= await _count(session, m.Section) <= 1815
        assert await _count(session, m.Instructor) == 300
        assert await _count(session, m.Review) == 5000
        assert await _count(session, m.Program) == 20  # ten programs in each of two catalog years
        assert await _count(session, m.CatalogYear) == 2
        terms_with_sections = (await session.execute(select(func.count(func.distinct(m.Section.term_id))))).scalar_one()
        assert terms_with_sections == 5
        past_with_sections = (
            await session.execute(
                select(func.count(func.distinct(m.Section.term_id)))
                .join(m.Term, m.Term.id == m.Section.term_id)
                .where(m.Term.end_date < datetime.now(UTC).date())
            )
        ).scalar_one()
        assert past_with_sections == 3  # a demo student's course history has three past terms
        past_without_finals = await _count(
            session,
            m.Term,
            m.Term.end_date < datetime.now(UTC).date(),
            m.Term.id.in_(select(m.Section.term_id)),
            m.Term.id.not_in(select(m.FinalsSchedule.term_id)),
        )
        assert past_without_finals == 0
        assert await _count(session, m.TermElectiveList) == 6
        assert await _count(session, m.FinalExam) > 300
        assert await _count(session, m.UniversityEvent, m.UniversityEvent.category == "holiday") >= 5


async def test_terms_surround_today_with_a_past_a_current_and_a_next_term() -> None:
    today = datetime.now(UTC).date()
    older, past, current, following, later = terms_around(today)
    assert older.end < past.start and past.end < today <= current.end < following.start < later.start
    assert current.uid.endswith(("10", "20", "30")) and len(current.uid) == 6


async def test_sections_meet_in_real_patterns(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        rows = (
            await session.execute(
                select(
                    m.MeetingTime.section_id,
                    m.MeetingTime.weekday,
                    m.MeetingTime.start_minute,
                    m.MeetingTime.end_minute,
                )
            )
        ).all()
        sections = (await session.execute(select(m.Section))).scalars().all()
    patterns: dict[int, list[tuple[int | None, int | None, int | None]]] = {}
    for section_id, weekday, start, end in rows:
        patterns.setdefault(section_id, []).append((weekday, start, end))
    shapes = Counter()
    for meetings in patterns.values():
        days = "".join("MTWRFSU"[d] for d, _, _ in sorted(meetings, key=lambda x: x[0] or 0) if d is not None)
        length = {(e or 0) - (s or 0) for _, s, e in meetings}
        shapes[(days, next(iter(length)) if len(length) == 1 else None)] += 1
    assert shapes[("MWF", 50)] > 100
    assert shapes[("TR", 75)] > 100
    assert sum(n for (days, minutes), n in shapes.items() if len(days) == 1 and minutes == 170) > 50  # 3-hour labs

    by_crn = {(s.term_id, s.crn): s for s in sections}
    labs = [s for s in sections if s.schedule_type == "Laboratory"]
    assert labs and all(s.linked_crns for s in labs)
    for lab in labs:
        lecture = by_crn[(lab.term_id, lab.linked_crns[0])]
        assert lecture.schedule_type == "Lecture" and lab.crn in lecture.linked_crns
        assert lecture.course_id == lab.course_id

    online = [s for s in sections if s.instructional_method == "Online"]
    assert len(online) > 30 and all(patterns[s.id] == [(None, None, None)] for s in online)
    assert sum(s.cancelled for s in sections) > 10
    full = [s for s in sections if not s.cancelled and s.seats_available is not None and s.seats_available <= 0]
    assert any(s.waitlist_capacity == 0 for s in full), "a full section without a waitlist"
    assert any((s.waitlist_capacity or 0) > 0 and (s.waitlist_available or 0) > 0 for s in full), "a waitlist with room"
    assert any((s.waitlist_capacity or 0) > 0 and s.waitlist_available == 0 for s in full), "a full waitlist"
    assert any(s.waitlist_capacity is None for s in sections), "a waitlist not read yet"
    assert any(s.cross_listed_crns for s in sections)


async def test_reviews_have_praise_and_complaint_in_many_wordings(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        reviews = (await session.execute(select(m.Review.text, m.Review.sentiment, m.Review.tags))).all()
        rated = await _count(session, m.InstructorRating)
    assert sum(1 for r in reviews if (r.sentiment or 0) > 0.4) > 1000
    assert sum(1 for r in reviews if (r.sentiment or 0) < -0.4) > 500
    assert len({r.text for r in reviews}) > 2000
    assert len({tag for r in reviews for tag in r.tags}) >= 15
    assert rated > 200


async def test_every_row_that_can_be_searched_by_meaning_has_a_vector(demo_campus: CampusHarness) -> None:
    async with demo_campus.sessions() as session:
        for model in (m.Course, m.Section, m.Review):
            assert await _count(session, model, model.embedding.is_(None)) == 0  # type: ignore[attr-defined]
        blob = (await session.execute(select(m.Course.embedding).limit(1))).scalar_one()
    assert blob is not None
    assert np.isclose(np.linalg.norm(semantic.from_bytes(blob)), 1.0, atol=1e-4)


def test_the_shipped_vectors_are_what_the_model_gives_now() -> None:
    texts = vectors.all_demo_texts()
    sample = [texts[0], texts[40], texts[-1]]
    shipped = [semantic.from_bytes(b) for b in vectors.demo_vectors(sample)]
    live = semantic.embed(sample)
    assert len(vectors._shipped()) >= len(set(texts)), "run python -m campus_catalog.demo.vectors"
    for stored, fresh in zip(shipped, live, strict=True):
        assert float(stored @ fresh) > 0.999


@pytest.mark.parametrize("scale", [1, 2])
async def test_the_generator_is_deterministic_and_scales(
    campus_factory, demo_campus: CampusHarness, scale: int
) -> None:  # type: ignore[no-untyped-def]
    fresh = await campus_factory(plugins=["catalog"])
    async with fresh.sessions() as session, session.begin():
        await load_demo_catalog(session, scale)
    async with fresh.sessions() as session:
        sections = (await session.execute(select(m.Section.crn, m.Section.course_id).order_by(m.Section.id))).all()
        reviews = (await session.execute(select(m.Review.text).order_by(m.Review.id).limit(50))).scalars().all()
        assert await _count(session, m.Review) == 5000 * scale
        assert await _count(session, m.Instructor) == 300 * scale
    async with demo_campus.sessions() as session:
        template = (await session.execute(select(m.Section.crn, m.Section.course_id).order_by(m.Section.id))).all()
        template_reviews = (
            (await session.execute(select(m.Review.text).order_by(m.Review.id).limit(50))).scalars().all()
        )
    if scale == 1:
        assert sections == template and reviews == template_reviews
    else:
        assert 2 * len(template) - 10 <= len(sections) <= 2 * len(template) + 10
