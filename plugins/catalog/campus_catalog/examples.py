"""Example calls of the catalog tools; the host's contract tests run them through a real MCP
client and check each result against the tool's outputSchema.

Demo examples use values of the deterministic demo campus (``campus_catalog.demo``): CRN 20001
is the first Spring section and 10001 the first Fall one, ``ins-x37kjuha`` its first
instructor. Sparse examples run on a database that ``add_sparse_catalog`` fills with the
awkward case of every table: nulls wherever a column allows one, empty lists, a section with no
meeting time, campus or part of term, an instructor with no rating and no reviews.
"""

from __future__ import annotations

from datetime import date, timedelta

from campus_mcp import ToolExample
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import (
    CatalogYear,
    Course,
    Instructor,
    Program,
    Review,
    Section,
    SectionInstructor,
    Subject,
    Term,
    TermElectiveList,
    UniversityEvent,
)

SPARSE_CRN = "55555"


async def add_sparse_catalog(session: AsyncSession) -> None:
    today = date.today()
    term = Term(
        uid="209910", name="Sparse Term", start_date=today - timedelta(days=10), end_date=today + timedelta(days=60)
    )
    session.add_all([term, Subject(code="ZZZ", name="Sparse subject", school=None)])
    await session.flush()
    course = Course(subject_code="ZZZ", course_number="1000", title="Bare course")
    instructor = Instructor(pub_id="sparse-instructor", name="Bare Instructor")
    session.add_all([course, instructor])
    await session.flush()
    section = Section(
        term_id=term.id,
        course_id=course.id,
        crn=SPARSE_CRN,
        section_number="01",
        cancelled=False,
        cross_listed_crns=[],
        linked_crns=[],
    )
    session.add(section)
    await session.flush()
    session.add(SectionInstructor(section_id=section.id, instructor_id=instructor.id, is_primary=False))
    session.add(Review(instructor_id=instructor.id, posted_on=today, tags=[], text=""))
    year = CatalogYear(label="2099-2100", start_year=2099)
    session.add(year)
    await session.flush()
    session.add(
        Program(catalog_year_id=year.id, slug="bare-program", name="Bare program", plans_of_study=[], elective_lists=[])
    )
    session.add(
        TermElectiveList(term_id=term.id, school="Bare school", title="Bare list", url="https://example.edu/x.pdf")
    )
    session.add(UniversityEvent(title="Bare event", start_date=today, end_date=today))
    await session.commit()


def _sparse(tool: str, **arguments: object) -> ToolExample:
    return ToolExample(tool=tool, arguments=arguments, data="sparse", prepare=add_sparse_catalog, user=None)


EXAMPLES: list[ToolExample] = [
    ToolExample(tool="list_terms", arguments={}, user=None),
    ToolExample(tool="list_subjects", arguments={}, user=None),
    ToolExample(tool="search_sections", arguments={"subject": "COMP", "days": "TR", "open_only": True}, user=None),
    ToolExample(tool="search_sections", arguments={"q": "intro to programming"}, user=None),
    ToolExample(tool="search_sections", arguments={"q": "a class about the stock market", "semantic": True}, user=None),
    ToolExample(tool="get_section", arguments={"crn": "20001"}),
    ToolExample(tool="similar_sections", arguments={"crn": "20001", "limit": 5}, user=None),
    ToolExample(tool="search_courses", arguments={"q": "programming"}, user=None),
    ToolExample(tool="get_course", arguments={"code": "COMP 2000"}, user=None),
    ToolExample(tool="list_programs", arguments={}, user=None),
    ToolExample(tool="degree_requirements", arguments={"slug": "bs-biomedical-engineering"}, user=None),
    ToolExample(tool="list_term_electives", arguments={"include_full_text": False}, user=None),
    ToolExample(tool="check_schedule", arguments={"crns": ["10001", "10002", "10003", "10004"]}),
    ToolExample(tool="search_instructors", arguments={"subject": "COMP"}, user=None),
    ToolExample(tool="get_instructor", arguments={"pub_id": "ins-x37kjuha"}, user=None),
    ToolExample(tool="similar_instructors", arguments={"pub_id": "ins-x37kjuha"}, user=None),
    ToolExample(tool="search_reviews", arguments={"sentiment": "negative", "limit": 5}, user=None),
    ToolExample(tool="search_reviews", arguments={"q": "explains things clearly", "semantic": True}, user=None),
    ToolExample(tool="university_events", arguments={}, user=None),
    _sparse("list_terms"),
    _sparse("list_subjects"),
    _sparse("search_sections"),
    _sparse("get_section", crn=SPARSE_CRN),
    _sparse("similar_sections", crn=SPARSE_CRN),
    _sparse("search_courses"),
    _sparse("get_course", code="ZZZ 1000"),
    _sparse("list_programs"),
    _sparse("degree_requirements", slug="bare-program"),
    _sparse("list_term_electives"),
    _sparse("check_schedule", crns=[SPARSE_CRN, "55556"]),
    _sparse("search_instructors"),
    _sparse("get_instructor", pub_id="sparse-instructor"),
    _sparse("similar_instructors", pub_id="sparse-instructor"),
    _sparse("search_reviews"),
    _sparse("university_events"),
]
