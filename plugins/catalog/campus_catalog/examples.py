"""Example calls of the catalog tools, declared on their operation (``campus_catalog.operations``);
the host's contract tests run them through a real MCP client and check each result against the
tool's outputSchema.

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


def demo(*, as_student: bool = False, **arguments: object) -> ToolExample:
    """A call on the demo campus, anonymous or (``as_student``) as the demo student ``student1``.
    Its tool is the operation it is declared on (``campus_catalog.operations``)."""
    return ToolExample(tool="", arguments=arguments, user="student1" if as_student else None)


def sparse(**arguments: object) -> ToolExample:
    """A call on the sparse catalog of ``add_sparse_catalog``, anonymous."""
    return ToolExample(tool="", arguments=arguments, data="sparse", prepare=add_sparse_catalog, user=None)
