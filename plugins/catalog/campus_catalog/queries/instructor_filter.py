"""The ``instructor`` filter of a section search: which instructors a part of a name (or a public
id) names, the SQL test of their sections, and the page of a few instructors' sections.

Kept apart from ``sections`` because it is the one filter whose best plan depends on how many
instructors it names (a few: their own rows; many: each section asks), and on the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from campus_mcp import Settings, ShapedStatements
from sqlalchemy import ColumnElement, CompoundSelect, Select, func, select, union
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import Course, Instructor, Section, SectionInstructor
from campus_catalog.queries import instructor_names, section_rows
from campus_catalog.schemas import SectionSearch

# An instructor filter naming at most this many instructors reads their sections by their ids.
FEW_TEACHERS = 500


def _teachers(instructor: str, dialect: str) -> CompoundSelect[Any]:
    """The instructors an ``instructor`` filter names: a part of the name, or the public id. Two
    selects, not an ``or``: the name test then reads the (name, id) index, not every instructor row
    with its vector (at --scale 67, 20,100 rows).

    SQLite's ``LIKE`` already ignores case the way its ``lower()`` does (ASCII letters only), so
    there the name is tested as it is: ``lower()`` of every name was most of the test at --scale 67.
    PostgreSQL's ``LIKE`` is case-sensitive and its ``lower()`` folds every letter."""
    part = instructor.lower()
    named = Instructor.name if dialect == "sqlite" else func.lower(Instructor.name)
    return union(
        select(Instructor.id).where(named.contains(part, autoescape=True)),
        select(Instructor.id).where(Instructor.pub_id == instructor),
    )


async def few_teachers(session: AsyncSession, instructor: str) -> list[int] | None:
    """The ids of the instructors an ``instructor`` filter names when they are few: at most
    FEW_TEACHERS and at most a tenth of the campus's instructors; else None (a broad part of a
    name such as "a", which names nearly everyone and is best tested section by section).

    Found in the roster held in process (instructor_names): asking the database read every name
    (``LIKE`` cannot seek) and counted the campus, much of a search at --scale 67."""
    roster = await instructor_names.roster(session)
    if roster is None:  # uncommitted catalog writes: what this session sees, from the database
        return await _few_teachers_asked(session, instructor)
    ids = roster.named(instructor, FEW_TEACHERS)
    if len(ids) > FEW_TEACHERS or len(ids) * 10 > len(roster):
        return None
    return ids


async def teachers_named(session: AsyncSession, instructor: str, most: int) -> list[int]:
    """The ids (ascending) of the instructors whose name holds ``instructor`` (or whose public id
    it is), up to ``most`` + 1 (more than ``most``: the caller says it fits too many)."""
    roster = await instructor_names.roster(session)
    if roster is not None:
        return roster.named(instructor, most)
    dialect = session.get_bind().dialect.name
    return sorted(await session.scalars(_teachers(instructor, dialect).limit(most + 1)))


async def _few_teachers_asked(session: AsyncSession, instructor: str) -> list[int] | None:
    """few_teachers asked of the database."""
    dialect = session.get_bind().dialect.name
    ids = list(await session.scalars(_teachers(instructor, dialect).limit(FEW_TEACHERS + 1)))
    if len(ids) > FEW_TEACHERS:
        return None
    if ids:
        # Are there ten times as many instructors? Counted up to that, not all of them (a count of
        # every instructor reads the whole table on PostgreSQL).
        enough = select(Instructor.id).limit(len(ids) * 10).subquery()
        if (await session.scalar(select(func.count()).select_from(enough)) or 0) < len(ids) * 10:
            return None
    return sorted(ids)


def taught_by(instructor: str, teachers: list[int] | None, dialect: str) -> ColumnElement[bool]:
    """Sections taught by the instructors named. A few instructors: their sections, from their
    own rows ("garcia" names 290 at --scale 67, teaching 495 sections of the term). Many (a part
    of a name such as "a" names 19,000 of 20,100, teaching 31,905 of the 36,030 sections of the
    term): each section of the term asks
    its own instructors, so a page stops after it and the count reads the term once. Driving the
    broad one from its sections' ids read each of 117,499 rows with its vector, twice (2 s); the
    ``+ 0`` keeps SQLite from probing the (section, instructor) key once per named instructor. It
    is SQLite's alone: PostgreSQL, unable to use an index for ``instructor_id + 0``, hashed every
    section-instructor row for it."""
    if teachers is not None:
        return Section.id.in_(select(SectionInstructor.section_id).where(SectionInstructor.instructor_id.in_(teachers)))
    named = SectionInstructor.instructor_id
    test = (named + 0 if dialect == "sqlite" else named).in_(_teachers(instructor, dialect))
    # A select of the key, not ``*``: SQLite then answers it from the (section, instructor) key alone.
    return select(SectionInstructor.section_id).where(SectionInstructor.section_id == Section.id, test).exists()


def _taught_matches(dialect: str, where: Sequence[ColumnElement[bool]]) -> Select[*tuple[Any, ...]]:
    """The ids of the sections matching ``where``, in the catalog order."""
    return (
        select(Section.id)
        .join(Course, Course.id == Section.course_id)
        .where(*where)
        .order_by(*section_rows.CATALOG_ORDER)
    )


_TAUGHT_MATCHES = ShapedStatements(_taught_matches)


async def taught_page(
    session: AsyncSession, settings: Settings, dialect: str, where: list[ColumnElement[bool]], query: SectionSearch
) -> tuple[list[int], int]:
    """The page's section ids and the total of a search whose instructors are few (few_teachers).

    A few instructors' sections (495 of the term for "garcia" at --scale 67) are found once, in the
    catalog order, then counted and paged here. The page statement found them twice, for its page
    and for its count (PostgreSQL hashes the term's 36,030 sections each time)."""
    matching, params = _TAUGHT_MATCHES.statement(settings, dialect, where)
    taught = [row[0] for row in await session.execute(matching, params)]
    return taught[query.offset : query.offset + query.limit], len(taught)
