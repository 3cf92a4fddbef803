"""Issue 37, point 7: check_schedule for a signed-in student knows their sections (no override
for a section they already hold) and their history (a prerequisite taken, or not known here).

One campus of catalog and schedule: a finished fall term in which the student took COMP 1000, and
a spring term in which they hold a full section of COMP 2000 (prerequisite COMP 1000) and plan a
full section of another course whose details were never loaded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from campus_catalog.models import Course, Section, Subject, Term
from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusFactory, CampusHarness, create_local_student
from campus_schedule.models import Enrollment

HELD_FULL, OTHER_FULL, PAST = "30001", "30002", "30000"


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> AsyncIterator[tuple[CampusHarness, int, int]]:
    campus = await campus_factory(plugins=["catalog", "schedule"])
    today = campus_today(campus.settings.timezone)
    async with campus.sessions() as session:
        fall = Term(uid="202710", name="Fall", start_date=today - timedelta(200), end_date=today - timedelta(90))
        spring = Term(uid="202720", name="Spring", start_date=today + timedelta(30), end_date=today + timedelta(140))
        session.add_all([fall, spring, Subject(code="COMP", name="Computer Science")])
        await session.flush()
        intro = Course(subject_code="COMP", course_number="1000", title="Intro", details_synced_at=datetime.now(UTC))
        structures = Course(
            subject_code="COMP",
            course_number="2000",
            title="Data Structures",
            prerequisites={"op": "and", "items": [{"course": "COMP 1000"}, {"course": "COMP 1500"}]},
            details_synced_at=datetime.now(UTC),
        )
        unread = Course(subject_code="COMP", course_number="3000", title="Algorithms")
        session.add_all([intro, structures, unread])
        await session.flush()
        full: dict[str, Any] = {"capacity": 30, "enrolled": 30, "seats_available": 0, "waitlist_capacity": 0}
        past = Section(term_id=fall.id, course_id=intro.id, crn=PAST, section_number="01")
        held = Section(term_id=spring.id, course_id=structures.id, crn=HELD_FULL, section_number="01", **full)
        other = Section(term_id=spring.id, course_id=unread.id, crn=OTHER_FULL, section_number="01", **full)
        session.add_all([past, held, other])
        newcomer = await create_local_student(session, "newcomer", "a-long-enough-password")
        student = await create_local_student(session, "sam", "a-long-enough-password")
        await session.flush()
        for section, term in ((past, fall), (held, spring)):
            session.add(Enrollment(student_id=student.id, term_uid=term.uid, section_id=section.id, crn=section.crn))
        await session.commit()
    yield campus, student.id, newcomer.id


async def _check(campus: CampusHarness, user_id: int | None) -> dict[str, Any]:
    principal = campus.principal(campus.registry.scopes, user_id=user_id) if user_id else None
    result = await campus.call(
        "check_schedule", {"term": "202720", "crns": [HELD_FULL, OTHER_FULL]}, principal=principal
    )
    assert not result.is_error and result.structured_content is not None, result.content
    return result.structured_content


async def test_no_override_for_a_section_the_student_holds(campus: tuple[CampusHarness, int, int]) -> None:
    harness, student, _ = campus
    anonymous = await _check(harness, None)
    assert sorted(tuple(o["crns"]) for o in anonymous["overrides_needed"]) == [(HELD_FULL,), (OTHER_FULL,)]
    assert anonymous["held_crns"] is None and anonymous["prerequisites"] is None

    mine = await _check(harness, student)
    # The full section they hold has their seat; the other full one still needs the override.
    assert [tuple(o["crns"]) for o in mine["overrides_needed"]] == [(OTHER_FULL,)]
    assert mine["held_crns"] == [HELD_FULL]
    # Asked again anonymously, the answer is the public one (a student's is never kept for others).
    assert (await _check(harness, None))["held_crns"] is None


async def test_prerequisites_against_the_students_history(campus: tuple[CampusHarness, int, int]) -> None:
    harness, student, newcomer = campus
    checks = {c["course_code"]: c for c in (await _check(harness, student))["prerequisites"]}
    # COMP 1000 was taken in the finished fall term; COMP 1500 is not on their record here.
    assert checks["COMP 2000"]["status"] == "not_on_record"
    assert checks["COMP 2000"]["not_on_record"] == ["COMP 1500"]
    assert "transfer, AP or test credit is not recorded" in checks["COMP 2000"]["note"]
    # The details of COMP 3000 were never loaded: unknown, never "none".
    assert checks["COMP 3000"]["status"] == "unknown"
    assert "not loaded" in checks["COMP 3000"]["note"]

    # A student with no past terms here: their history is unknown, not empty.
    fresh = {c["course_code"]: c for c in (await _check(harness, newcomer))["prerequisites"]}
    assert fresh["COMP 2000"]["status"] == "unknown"
    assert "not on record here" in fresh["COMP 2000"]["note"]
