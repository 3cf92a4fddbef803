"""Course details from Banner's detail pages: a course's description and its prerequisites.

Banner 9's class search answers two HTML fragments per section (``searchResults/
getCourseDescription`` and ``searchResults/getSectionPrerequisites``, each with ``term`` and
``courseReferenceNumber``). The live details sync reads them from the campus's Banner
(``course_details``); a campus that imports saved ``searchResults`` pages can save these too and
import them from a folder (:func:`import_detail_pages`), named by endpoint, term and CRN::

    getCourseDescription-201820-20181.html
    getSectionPrerequisites-201820-20181.html

The description fragment, as Banner serves it::

    <section aria-labelledby="courseDescription">
        Fundamental concepts of biology.<br/>
        <b>Section information text:</b><br/>
        Tuesday 5:10-6:50 pm reserved for midterm exams
    </section>

The course's description is the section's text before "Section information text:" (what follows
is that one section's note, not the course's); "No course description is available." is none.
The prerequisites fragment is the table ``prerequisites.parse_prerequisites`` reads.

Either way a course whose description changes loses its vector and its untitled sections'
copies (:func:`apply_details`), so the fill after the import embeds only what changed.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_catalog.models import Course, Instructor, Section, SectionInstructor, Subject, Term
from campus_catalog.sources.prerequisites import UnreadablePrerequisites, parse_prerequisites

DESCRIPTION = "getCourseDescription"
PREREQUISITES = "getSectionPrerequisites"
# A saved detail page's name: the endpoint, the term code and the CRN.
SAVED_PAGE = re.compile(rf"^({DESCRIPTION}|{PREREQUISITES})-(\d{{6}})-(\d{{1,10}})\.html?$", re.IGNORECASE)
# Where a section's own note starts inside the description fragment.
_SECTION_NOTE = re.compile(r"section information text\s*:", re.IGNORECASE)
# A saved page larger than this is not one of Banner's fragments (they are a few kilobytes).
MAX_PAGE_BYTES = 200_000


class _Description(HTMLParser):
    """The text of the ``courseDescription`` section when the fragment has one, else all of it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.everything: list[str] = []
        self.described: list[str] = []
        self._depth = 0  # > 0 inside <section aria-labelledby="courseDescription">

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._depth:
            self._depth += tag == "section"
        elif tag == "section" and dict(attrs).get("aria-labelledby") == "courseDescription":
            self._depth = 1
        if tag in ("br", "p", "div", "li"):
            self._space()

    def handle_endtag(self, tag: str) -> None:
        if self._depth and tag == "section":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        self.everything.append(data)
        if self._depth:
            self.described.append(data)

    def _space(self) -> None:
        self.everything.append(" ")
        if self._depth:
            self.described.append(" ")


def description_text(fragment: str) -> str | None:
    """The course's description in Banner's ``getCourseDescription`` fragment, as plain text
    (entities decoded, whitespace collapsed), or None when Banner has none."""
    parser = _Description()
    parser.feed(fragment)
    parser.close()
    text = " ".join(html.unescape("".join(parser.described or parser.everything)).split())
    text = _SECTION_NOTE.split(text, maxsplit=1)[0].strip()
    if not text or text.lower().startswith("no course description"):
        return None
    return text


async def forget_course_vectors(session: AsyncSession, course: Course) -> None:
    """Clear the vectors a new description makes stale, so the job's fill embeds them again.

    The course's text includes its description, and its sections without a title of their own
    carry a copy of the course's vector (``semantic.fill_missing_vectors``); a section with a
    title of its own embeds its course's description too, and an instructor's vector is the mean
    of the courses they teach.
    """
    course.embedding = None
    await session.execute(update(Section).where(Section.course_id == course.id).values(embedding=None))
    teaching = select(SectionInstructor.instructor_id).join(Section, Section.id == SectionInstructor.section_id)
    await session.execute(
        update(Instructor)
        .where(Instructor.id.in_(teaching.where(Section.course_id == course.id).scalar_subquery()))
        .values(embedding=None)
    )


async def subject_codes(session: AsyncSession) -> dict[str, str]:
    """Subject names to codes: Banner's prerequisite table names a subject, not its code."""
    return {s.name: s.code for s in await session.scalars(select(Subject))}


async def apply_details(
    session: AsyncSession,
    course: Course,
    *,
    description_page: str | None,
    prerequisites_page: str | None,
    subjects: Mapping[str, str],
) -> tuple[bool, str | None]:
    """Store what the pages say of ``course`` (a page not given changes nothing): whether anything
    changed, and why the prerequisites could not be read (then they are left as they were)."""
    changed = False
    if description_page is not None:
        description = description_text(description_page)
        if description is not None and description != course.description:
            await forget_course_vectors(session, course)
            course.description = description
            changed = True
    problem = None
    if prerequisites_page is not None:
        try:
            tree = parse_prerequisites(prerequisites_page, subjects)
        except UnreadablePrerequisites as exc:
            problem = f"prerequisites of {course.code}: {exc}"
        else:
            if tree != course.prerequisites:
                course.prerequisites = tree
                changed = True
    return changed, problem


@dataclass
class DetailPages:
    """The saved pages of one section: either may be missing."""

    description: str | None = None
    prerequisites: str | None = None


@dataclass
class DetailsReport:
    """What an import of detail pages did, by course."""

    changed: int = 0
    unchanged: int = 0
    # "CRN 20181 of 201820" (or a file's name) -> why nothing of it was stored.
    lost: dict[str, str] = field(default_factory=dict)

    @property
    def stored(self) -> int:
        return self.changed + self.unchanged

    def summary(self) -> str:
        return (
            f"details of {self.stored} courses: {self.changed} changed, {self.unchanged} unchanged; "
            f"{len(self.lost)} not stored"
        )


def saved_detail_pages(folder: Path) -> tuple[dict[tuple[str, str], DetailPages], dict[str, str]]:
    """The detail pages saved in ``folder`` by (term, CRN), and the files that could not be read.
    Other files (the searchResults JSON beside them) are not detail pages and are left alone."""
    pages: dict[tuple[str, str], DetailPages] = {}
    unreadable: dict[str, str] = {}
    for file in sorted(folder.iterdir()) if folder.is_dir() else []:
        named = SAVED_PAGE.match(file.name)
        if named is None or not file.is_file():
            continue
        try:
            if file.stat().st_size > MAX_PAGE_BYTES:
                raise ValueError(f"larger than {MAX_PAGE_BYTES} bytes: not a Banner detail page")
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            unreadable[file.name] = f"unreadable: {exc}"
            continue
        endpoint, term, crn = named.groups()
        found = pages.setdefault((term, crn), DetailPages())
        if endpoint.lower() == DESCRIPTION.lower():
            found.description = text
        else:
            found.prerequisites = text
    return pages, unreadable


def has_detail_pages(path: Path) -> bool:
    return path.is_dir() and any(SAVED_PAGE.match(file.name) for file in path.iterdir())


async def import_detail_pages(
    sessions: async_sessionmaker[AsyncSession],
    folder: Path,
    *,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> DetailsReport:
    """Import the saved detail pages of ``folder`` (see the module docstring), matched to the
    catalog by term and CRN: import the term's searchResults first. One transaction."""
    report = DetailsReport()
    pages, unreadable = await asyncio.to_thread(saved_detail_pages, folder)
    report.lost.update(unreadable)
    if not pages and not unreadable:
        raise FileNotFoundError(
            f"no detail pages in {folder}: save them as {DESCRIPTION}-TERM-CRN.html and {PREREQUISITES}-TERM-CRN.html"
        )
    changed_courses: set[int] = set()
    async with sessions() as session:
        subjects = await subject_codes(session)
        rows = (
            await session.execute(
                select(Term.uid, Section.crn, Section.course_id)
                .join(Term, Term.id == Section.term_id)
                .where(Section.crn.in_({crn for _term, crn in pages}))
            )
        ).all()
        course_of = {(term, crn): course_id for term, crn, course_id in rows}
        seen: set[int] = set()
        for done, ((term, crn), found) in enumerate(sorted(pages.items())):
            if progress is not None:
                progress("course details", done, len(pages))
            label = f"CRN {crn} of {term}"
            course_id = course_of.get((term, crn))
            if course_id is None:
                report.lost[label] = f"no section {crn} in term {term}: import the term's searchResults first"
                continue
            course = await session.get(Course, course_id)
            if course is None:
                continue
            changed, problem = await apply_details(
                session,
                course,
                description_page=found.description,
                prerequisites_page=found.prerequisites,
                subjects=subjects,
            )
            if problem is not None:
                report.lost[label] = f"parse: {problem}"
            if changed:
                changed_courses.add(course_id)
            seen.add(course_id)
        await session.commit()
    if progress is not None:
        progress("course details", len(pages), len(pages))
    report.changed = len(changed_courses)
    report.unchanged = len(seen - changed_courses)
    return report
