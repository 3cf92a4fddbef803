"""A small catalog of our own for the tool tests: three terms around today, a handful of courses
and sections chosen to hit each rule (a full section with a waitlist, an unread waitlist, a
lecture with two linked labs, a time conflict of 20 minutes, an online section with no meeting
times, a cancelled section), instructors with reviews, a program, elective lists, events, finals.

Dates are relative to today on the campus, because "current" and "next" term are derived from
today; every other value is fixed, so the tests can assert exact answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from campus_catalog.models import (
    Campus,
    CatalogYear,
    Course,
    FinalExam,
    FinalsSchedule,
    Instructor,
    InstructorRating,
    MeetingTime,
    PartOfTerm,
    Program,
    Review,
    Section,
    SectionAttribute,
    SectionInstructor,
    Subject,
    Term,
    TermElectiveList,
    UniversityEvent,
)
from campus_catalog.queries.clock import campus_today
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app, load_plugins, test_settings
from sqlalchemy.ext.asyncio import AsyncSession

SYNCED = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
PREREQ_TREE: dict[str, Any] = {
    "op": "and",
    "items": [
        {"course": "COMP 1000", "min_grade": "C"},
        {"op": "or", "items": [{"course": "MATH 1750"}, {"test": "Math Placement", "min_score": "60"}]},
    ],
}


def _weekly(section: Section, days: str, start: int, end: int, **extra: Any) -> None:
    for letter in days:
        section.meeting_times.append(
            MeetingTime(weekday="MTWRFSU".index(letter), start_minute=start, end_minute=end, **extra)
        )


async def seed_catalog(session: AsyncSession, today: date) -> None:
    past = Term(
        uid="202630",
        name="Summer 2026",
        start_date=today - timedelta(days=200),
        end_date=today - timedelta(days=120),
    )
    current = Term(
        uid="202710",
        name="Fall 2026",
        start_date=today - timedelta(days=90),
        end_date=today + timedelta(days=20),
        sections_synced_at=SYNCED,
    )
    upcoming = Term(
        uid="202720",
        name="Spring 2027",
        start_date=today + timedelta(days=35),
        end_date=today + timedelta(days=150),
        registration_opens_on=today - timedelta(days=10),
        registration_closes_on=today + timedelta(days=40),
        sections_synced_at=SYNCED,
        details_synced_at=SYNCED,
    )
    session.add_all([past, current, upcoming])
    await session.flush()
    full_term = PartOfTerm(
        term_id=upcoming.id, code="1", name="Full Term", start_date=upcoming.start_date, end_date=upcoming.end_date
    )
    half_term = PartOfTerm(term_id=upcoming.id, code="A", name="First Half", start_date=upcoming.start_date)
    boston = Campus(code="BOS", name="Boston")
    online = Campus(code="ONL", name="Online")
    session.add_all([full_term, half_term, boston, online])
    session.add_all(
        [
            Subject(code="COMP", name="Computer Science", school="School of Computing and Data Science"),
            Subject(code="MATH", name="Mathematics", school="School of Sciences and Humanities"),
            Subject(code="CHEM", name="Chemistry", school="School of Sciences and Humanities"),
            Subject(code="MGMT", name="Management", school="School of Management"),
        ]
    )
    await session.flush()
    intro = Course(
        subject_code="COMP",
        course_number="1000",
        title="Introduction to Programming",
        description="Write programs in Python: variables, loops, functions and testing.",
        credits_min=4,
        credits_max=4,
        terms_offered=["Fall", "Spring"],
        details_synced_at=SYNCED,
    )
    data_structures = Course(
        subject_code="COMP",
        course_number="2000",
        title="Data Structures",
        description="Lists, trees, hash tables and graphs, and the cost of operations on them.",
        credits_min=4,
        credits_max=4,
        prerequisites=PREREQ_TREE,
        corequisites=["COMP 2001"],
        restrictions=[{"kind": "include", "type": "major", "values": ["Computer Science"]}],
        mutual_exclusions=["COMP 2050"],
        catalog_entry="COMP 2000 Data Structures (4 credits)",
        fees=[{"description": "Lab fee", "amount": 75.0}],
        learning_objectives=["Choose a data structure for a problem"],
        terms_offered=["Spring"],
        details_synced_at=SYNCED,
    )
    # Never read by a details run: its description and prerequisites are "not loaded here".
    calculus = Course(subject_code="MATH", course_number="1750", title="Calculus I", credits_min=4, credits_max=4)
    chemistry = Course(
        subject_code="CHEM",
        course_number="1100",
        title="Chemistry I",
        description="Atoms, bonds and reactions, with a weekly laboratory.",
        credits_min=4,
        credits_max=4,
        details_synced_at=SYNCED,
    )
    investments = Course(
        subject_code="MGMT",
        course_number="3100",
        title="Investments",
        description="Stocks, bonds and how the stock market prices a company.",
        credits_min=3,
        credits_max=3,
        details_synced_at=SYNCED,
    )
    session.add_all([intro, data_structures, calculus, chemistry, investments])
    ada = Instructor(pub_id="ada-lovelace", name="Ada Lovelace", department="Computer Science", email="ada@example.edu")
    grace = Instructor(pub_id="grace-hopper", name="Grace Hopper", department="Computer Science")
    marie = Instructor(pub_id="marie-curie", name="Marie Curie", department="Chemistry")
    session.add_all([ada, grace, marie])
    await session.flush()
    session.add(
        InstructorRating(
            instructor_id=ada.id,
            overall=4.5,
            difficulty=3.1,
            would_take_again_percent=90.0,
            rating_count=3,
            distribution={"1": 0, "2": 1, "3": 0, "4": 0, "5": 2},
            tag_counts={"Tough grader": 1, "Clear grading criteria": 2},
            fetched_at=SYNCED,
        )
    )
    session.add_all(
        [
            Review(
                instructor_id=ada.id,
                course_code="COMP 1000",
                posted_on=today - timedelta(days=40),
                overall=5,
                difficulty=3,
                would_take_again=True,
                tags=["Clear grading criteria"],
                text="Clear lectures and fair exams. She explains recursion so it finally makes sense.",
                sentiment=0.9,
            ),
            Review(
                instructor_id=ada.id,
                course_code="COMP 2000",
                posted_on=today - timedelta(days=20),
                overall=2,
                difficulty=5,
                would_take_again=False,
                tags=["Tough grader"],
                text="Tough grader. The exams were impossible and homework took all weekend.",
                sentiment=-0.8,
            ),
            Review(
                instructor_id=ada.id,
                course_code="COMP 1000",
                posted_on=today - timedelta(days=400),
                overall=3,
                difficulty=3,
                tags=[],
                text="Lectures are recorded. Attendance is taken.",
                sentiment=0.0,
            ),
        ]
    )

    def section(course: Course, crn: str, number: str, term: Term = upcoming, **values: Any) -> Section:
        defaults: dict[str, Any] = {
            "schedule_type": "Lecture",
            "instructional_method": "In-Person",
            "campus_id": boston.id,
            "part_of_term_id": full_term.id if term is upcoming else None,
            "capacity": 30,
            "enrolled": 20,
            "seats_available": 10,
            "waitlist_capacity": 0,
            "waitlist_available": 0,
            "banner_synced_at": SYNCED,
        }
        defaults.update(values)
        made = Section(term_id=term.id, course_id=course.id, crn=crn, section_number=number, **defaults)
        session.add(made)
        return made

    full = section(intro, "20001", "01", enrolled=30, seats_available=0, waitlist_capacity=10, waitlist_available=4)
    _weekly(full, "MWF", 600, 650, building="WENTW", room="210", meeting_type="Class")
    unread = section(intro, "20002", "02", waitlist_capacity=None, waitlist_available=None)
    _weekly(unread, "TR", 780, 855, building="WENTW", room="212", meeting_type="Class")
    clash = section(data_structures, "20003", "01")
    _weekly(clash, "MW", 630, 705, building="BEATT", room="101", meeting_type="Class")
    lecture = section(chemistry, "20004", "13E", linked_crns=["20005", "20006"], link_identifier="A")
    _weekly(lecture, "TR", 540, 615, building="DOBBS", room="001", meeting_type="Class")
    lab_w = section(chemistry, "20005", "15E", schedule_type="Laboratory", credits_min=0, linked_crns=["20004"])
    _weekly(lab_w, "W", 840, 1010, building="DOBBS", room="105", meeting_type="Lab")
    lab_f = section(chemistry, "20006", "16E", schedule_type="Laboratory", credits_min=0, linked_crns=["20004"])
    _weekly(lab_f, "F", 840, 1010, building="DOBBS", room="105", meeting_type="Lab")
    online_section = section(
        investments, "20007", "OL1", instructional_method="Online", campus_id=online.id, part_of_term_id=half_term.id
    )
    online_section.meeting_times.append(MeetingTime(weekday=None, building="ONLINE", room="ONLINE"))
    online_section.attributes.append(SectionAttribute(code="HSS", description="Humanities and Social Sciences"))
    cancelled = section(calculus, "20008", "01", cancelled=True)
    _weekly(cancelled, "MWF", 480, 530)
    now_section = section(intro, "10001", "01", term=current)
    _weekly(now_section, "MWF", 540, 590, building="WENTW", room="210")
    await session.flush()
    for crn_section, who, primary in [
        (full, ada, True),
        (unread, grace, True),
        (clash, ada, True),
        (clash, grace, False),
        (lecture, marie, True),
        (lab_w, marie, True),
        (now_section, ada, True),
    ]:
        session.add(SectionInstructor(section_id=crn_section.id, instructor_id=who.id, is_primary=primary))

    year = CatalogYear(label="2026-2027", start_year=2026, imported_at=SYNCED)
    old_year = CatalogYear(label="2025-2026", start_year=2025, imported_at=SYNCED)
    session.add_all([year, old_year])
    await session.flush()
    session.add(
        Program(
            catalog_year_id=year.id,
            slug="computer-science-bs",
            name="Computer Science",
            school="School of Computing and Data Science",
            degree="BS",
            total_credits=128,
            plans_of_study=[
                {
                    "name": "Standard",
                    "semesters": [
                        {
                            "label": "Year 1 Fall",
                            "courses": [
                                {"code": "COMP 1000", "title": "Introduction to Programming", "credits": 4},
                                {"code": None, "title": "HSS Elective", "credits": 4},
                            ],
                        }
                    ],
                }
            ],
            elective_lists=[{"name": "Technical electives", "courses": ["COMP 2000", "MGMT 3100"]}],
        )
    )
    session.add(
        TermElectiveList(
            term_id=upcoming.id,
            school="School of Sciences and Humanities",
            title="HSS electives Spring 2027",
            url="https://example.edu/electives/hss-spring-2027.pdf",
            fetched_at=SYNCED,
            course_headings=[{"code": "MGMT 3100", "title": "Investments", "crns": ["20007"]}],
            full_text="HSS electives for Spring 2027. MGMT 3100 Investments, online, CRN 20007.",
        )
    )
    session.add_all(
        [
            UniversityEvent(
                source_uid="spring-break",
                title="Spring Break",
                start_date=today + timedelta(days=90),
                end_date=today + timedelta(days=96),
                category="holiday",
                last_fetched_at=SYNCED,
            ),
            UniversityEvent(
                source_uid="drop",
                title="Last day to drop a class",
                start_date=today + timedelta(days=50),
                end_date=today + timedelta(days=50),
                category="deadline",
                last_fetched_at=SYNCED,
            ),
            UniversityEvent(
                source_uid="old",
                title="Summer classes begin",
                start_date=today - timedelta(days=200),
                end_date=today - timedelta(days=200),
                category="term",
                last_fetched_at=SYNCED,
            ),
        ]
    )
    finals = FinalsSchedule(term_id=upcoming.id, status="completed", loaded_at=SYNCED, source_name="finals.pdf")
    finals.exams.append(
        FinalExam(
            term_id=upcoming.id,
            crn="20001",
            exam_date=upcoming.end_date - timedelta(days=3),
            start_minute=540,
            end_minute=660,
            building="WENTW",
            room="210",
        )
    )
    session.add(finals)
    await session.commit()


async def build_catalog_campus(databases: TestDatabases, **overrides: Any) -> CampusHarness:
    # A copy of the catalog's migrated template: an upgrade from nothing costs far more.
    url = await databases.migrated_copy(["catalog"])
    registry = load_plugins(test_settings(url, plugins=["catalog"], **overrides))
    harness = CampusHarness(app=harness_app(registry), registry=registry)
    async with harness.sessions() as session:
        await seed_catalog(session, campus_today(harness.settings.timezone))
    return harness


@pytest.fixture(scope="session")
async def catalog_campus(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    """The small catalog above, shared by the session: read-only tests only."""
    harness = await build_catalog_campus(campus_databases)
    yield harness
    await harness.close()
    await campus_databases.drop(harness.settings.database_url)


class ToolCaller:
    """Calls the catalog tools of one harness through the MCP client: ``ok`` for an answer,
    ``error`` for the text of a tool error."""

    def __init__(self, harness: CampusHarness) -> None:
        self.harness = harness

    async def ok(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        result = await self.harness.call(tool, arguments)
        assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
        assert result.structured_content is not None
        return result.structured_content

    async def error(self, tool: str, /, **arguments: Any) -> str:
        result = await self.harness.call(tool, arguments)
        assert result.is_error, result.structured_content
        text: str = result.content[0].text  # type: ignore[union-attr]
        return text


@pytest.fixture
def catalog(catalog_campus: CampusHarness) -> ToolCaller:
    return ToolCaller(catalog_campus)


async def rest_answers(harness: CampusHarness, urls: list[str]) -> dict[str, tuple[int, Any]]:
    """GET each URL through the REST API: ``url -> (status, JSON)``.

    All in one client, because an app's lifespan (and the MCP session manager in it) runs once.
    The pool is emptied first: the test client runs the app on an event loop of its own, and a
    PostgreSQL connection made on the tests' loop cannot be used from another one.
    """
    await harness.deployment.engine.dispose()
    answers: dict[str, tuple[int, Any]] = {}
    async with harness.rest() as client:
        for url in urls:
            response = await client.get(url)
            answers[url] = (response.status_code, response.json())
    return answers


@pytest.fixture(scope="module")
async def rest_catalog_campus(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    """A catalog campus of its own for a module that uses the REST API: its lifespan runs once,
    so one module gets it (use ``rest_answers``)."""
    harness = await build_catalog_campus(campus_databases)
    yield harness
    await harness.close()
    await campus_databases.drop(harness.settings.database_url)


@pytest.fixture(scope="session")
def get_all() -> Callable[[CampusHarness, list[str]], Awaitable[dict[str, tuple[int, Any]]]]:
    return rest_answers
