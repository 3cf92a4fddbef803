"""Parsed Banner sections into the catalog tables, as an upsert.

A second import of the same data changes nothing: rows are matched on their natural keys
(term and CRN, subject and course number, instructor e-mail or name), a section is written
only when one of its values differs, and its meetings, instructors and attributes are replaced
only when the set of them differs, so their ids stay. What an import did is counted
(created, updated, unchanged) and every section it could not map fully is reported by CRN.

Which timestamp a run sets says what kind of run it was (seed 000, "Last refresh"):
``Term.sections_synced_at`` after a live sync read the whole term, ``Term.catalog_imported_at``
after a file import. A run that lost a page sets neither: freshness is a full run's time.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from campus_catalog.models import (
    Campus,
    Course,
    Instructor,
    MeetingTime,
    PartOfTerm,
    Section,
    SectionAttribute,
    SectionInstructor,
    Subject,
    Term,
)
from campus_catalog.sources.banner_details import DetailsReport
from campus_catalog.sources.banner_parse import (
    BannerInstructor,
    BannerMeeting,
    BannerSection,
    MappingProblem,
    subject_name,
)

ONLINE_LOCATION = "Online"
# Banner appends this to the description of a past term in getTerms.
_VIEW_ONLY = re.compile(r"\s*\(View Only\)\s*$", re.IGNORECASE)


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    terms: list[str] = field(default_factory=list)
    problems: list[MappingProblem] = field(default_factory=list)
    # (term code, CRN) of each stored section that changed or was cancelled: published to the
    # listeners of the section (campus_catalog.resources) once the import is committed.
    changed_sections: list[tuple[str, str]] = field(default_factory=list)
    # The saved detail pages imported with the sections (banner_details), when the folder had some.
    details: DetailsReport | None = None

    @property
    def stored(self) -> int:
        return self.created + self.updated + self.unchanged

    @property
    def refused(self) -> list[MappingProblem]:
        """The rows (or pages) that were not stored."""
        return [p for p in self.problems if not p.stored]

    def lost(self) -> dict[str, str]:
        """What was not stored, for the job-run record: one entry per refused row (``"CRN 45405"``,
        ``"id 12"``, ``"page x.json item 3"``), so the record's count is the rows refused. A row
        stored with a gap is not lost (``gaps``)."""
        found: dict[str, str] = {}
        for problem in self.refused:
            key = base = _key(problem.item)
            copies = 1
            while key in found:  # two refused rows with one label (one CRN twice) are two rows
                copies += 1
                key = f"{base} ({copies})"
            found[key] = problem.reason
        if self.details is not None:
            found.update(self.details.lost)
        return found

    def gaps(self) -> dict[str, str]:
        """The rows stored with something left out (no times, no credits), by CRN."""
        found: dict[str, str] = {}
        for problem in self.problems:
            if problem.stored:
                key = _key(problem.item)
                found[key] = f"{found[key]}; {problem.reason}" if key in found else problem.reason
        return found

    def summary(self) -> str:
        kinds = Counter(p.kind or p.reason for p in self.refused)
        refused = (
            f"{len(self.refused)} refused ({', '.join(f'{n} {kind}' for kind, n in kinds.most_common())})"
            if kinds
            else "0 refused"
        )
        details = "" if self.details is None else f"; {self.details.summary()}"
        return (
            f"{self.stored} sections in {', '.join(self.terms) or 'no term'}: {self.created} new, "
            f"{self.updated} changed, {self.unchanged} unchanged; {refused}; "
            f"{len(self.gaps())} stored with gaps{details}"
        )


def _key(item: str) -> str:
    """A CRN as ``"CRN 45405"``; any other label (Banner's id, a page, a term) as it is."""
    return f"CRN {item}" if item.isdigit() else item


def term_name(description: str | None, code: str) -> str:
    if not description:
        return code
    return _VIEW_ONLY.sub("", description).strip() or code


def instructor_pub_id(person: BannerInstructor) -> str:
    """A stable public id from the name (never Banner's id, which is a person's record number)."""
    slug = re.sub(r"[^a-z0-9]+", "-", person.name.lower()).strip("-")[:24] or "instructor"
    digest = hashlib.sha256((person.email or person.name).lower().encode()).hexdigest()[:6]
    return f"{slug}-{digest}"


def _minutes(value: Any) -> int | None:
    return None if value is None else value.hour * 60 + value.minute


def meeting_rows(meeting: BannerMeeting) -> list[dict[str, Any]]:
    """One row per weekday (the model's unit); a meeting with no fixed day is one row, weekday None."""
    base = {
        "start_minute": _minutes(meeting.start_time),
        "end_minute": _minutes(meeting.end_time),
        "start_date": meeting.start_date,
        "end_date": meeting.end_date,
        "building": meeting.building,
        "building_name": ONLINE_LOCATION if meeting.online else meeting.building_description,
        "room": meeting.room,
        "meeting_type": meeting.meeting_type_description or meeting.meeting_type,
    }
    return [{"weekday": day, **base} for day in (meeting.weekdays or (None,))]


_MEETING_FIELDS = ("weekday", "start_minute", "end_minute", "start_date", "end_date", "building", "building_name")
_MEETING_KEY = (*_MEETING_FIELDS, "room", "meeting_type")


def _meeting_key(row: dict[str, Any] | MeetingTime) -> tuple[Any, ...]:
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name)
    return tuple(get(name) for name in _MEETING_KEY)


class _Lookups:
    """The rows an import matches against, loaded once per import instead of once per section."""

    def __init__(self) -> None:
        self.subjects: dict[str, Subject] = {}
        self.courses: dict[tuple[str, str], Course] = {}
        self.campuses: dict[str, Campus] = {}
        self.instructors_by_email: dict[str, Instructor] = {}
        self.instructors_by_name: dict[str, Instructor] = {}
        self.pub_ids: set[str] = set()

    async def load(self, session: AsyncSession) -> None:
        self.subjects = {s.code: s for s in (await session.scalars(select(Subject))).all()}
        self.courses = {(c.subject_code, c.course_number): c for c in (await session.scalars(select(Course))).all()}
        for campus in (await session.scalars(select(Campus))).all():
            self.campuses[campus.name] = campus
        await self.load_instructors(session)

    async def load_instructors(self, session: AsyncSession) -> None:
        for person in (await session.scalars(select(Instructor))).all():
            self.pub_ids.add(person.pub_id)
            if person.email:
                self.instructors_by_email[person.email.lower()] = person
            self.instructors_by_name.setdefault(person.name.lower(), person)


async def _subject(session: AsyncSession, lookups: _Lookups, section: BannerSection) -> Subject:
    subject = lookups.subjects.get(section.subject)
    if subject is None:
        subject = Subject(code=section.subject, name=section.subject_description or section.subject)
        session.add(subject)
        lookups.subjects[subject.code] = subject
    elif (named := section.subject_description) and subject.name != named == subject_name(subject.code, subject.name):
        # A name stored with its code in front ("COMP-Computing") before subject_name read that way.
        subject.name = named
    return subject


async def _course(session: AsyncSession, lookups: _Lookups, section: BannerSection, title: str) -> Course:
    key = (section.subject, section.course_number)
    course = lookups.courses.get(key)
    if course is None:
        await _subject(session, lookups, section)
        course = Course(
            subject_code=section.subject,
            course_number=section.course_number,
            title=title,
            credits_min=section.credits_min,
            credits_max=section.credits_max,
        )
        session.add(course)
        lookups.courses[key] = course
    return course


async def _campus(session: AsyncSession, lookups: _Lookups, section: BannerSection) -> Campus | None:
    if not section.campus:
        return None
    campus = lookups.campuses.get(section.campus)
    if campus is None:
        codes = {c.code for c in lookups.campuses.values()}
        # Banner's short code ("CS") from the meetings when it has one; else the name.
        given = next((m.campus_code for m in section.meetings if m.campus_code), None)
        code = (given or section.campus)[:20]
        suffix = 2
        while code in codes:
            code = f"{section.campus[:17]}-{suffix}"
            suffix += 1
        campus = Campus(code=code, name=section.campus)
        session.add(campus)
        lookups.campuses[campus.name] = campus
    return campus


async def _instructor(session: AsyncSession, lookups: _Lookups, person: BannerInstructor) -> Instructor:
    found = lookups.instructors_by_email.get(person.email.lower()) if person.email else None
    found = found or lookups.instructors_by_name.get(person.name.lower())
    if found is not None:
        return found
    pub_id = instructor_pub_id(person)
    while pub_id in lookups.pub_ids:
        pub_id = f"{pub_id}x"
    found = Instructor(pub_id=pub_id, name=person.name, email=person.email)
    session.add(found)
    lookups.pub_ids.add(pub_id)
    if person.email:
        lookups.instructors_by_email[person.email.lower()] = found
    lookups.instructors_by_name.setdefault(person.name.lower(), found)
    return found


def _date_range(sections: Iterable[BannerSection]) -> tuple[date | None, date | None]:
    starts = [m.start_date for s in sections for m in s.meetings if m.start_date]
    ends = [m.end_date for s in sections for m in s.meetings if m.end_date]
    return (min(starts) if starts else None, max(ends) if ends else None)


async def _term(session: AsyncSession, code: str, sections: Sequence[BannerSection]) -> Term:
    term = await session.scalar(select(Term).where(Term.uid == code))
    full_term = [s for s in sections if s.part_of_term in (None, "1")] or list(sections)
    start, end = _date_range(full_term)
    if term is None:
        description = next((s.term_description for s in sections if s.term_description), None)
        today = date.today()
        term = Term(uid=code, name=term_name(description, code), start_date=start or today, end_date=end or today)
        session.add(term)
        await session.flush()
    elif start and end and (term.start_date, term.end_date) != (start, end):
        # Banner's meeting dates beat the guessed dates of a term made ahead of time.
        term.start_date, term.end_date = start, end
    return term


async def _parts(session: AsyncSession, term: Term, sections: Sequence[BannerSection]) -> dict[str, PartOfTerm]:
    parts = {p.code: p for p in (await session.scalars(select(PartOfTerm).where(PartOfTerm.term_id == term.id)))}
    by_code: dict[str, list[BannerSection]] = defaultdict(list)
    for section in sections:
        if section.part_of_term:
            by_code[section.part_of_term].append(section)
    for code, members in by_code.items():
        start, end = _date_range(members)
        part = parts.get(code)
        if part is None:
            name = "Full term" if code == "1" else f"Part of term {code}"
            part = PartOfTerm(term_id=term.id, code=code, name=name, start_date=start, end_date=end)
            session.add(part)
            parts[code] = part
        elif (part.start_date, part.end_date) != (start, end) and start and end:
            part.start_date, part.end_date = start, end
    await session.flush()
    return parts


def _groups(sections: Sequence[BannerSection]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Cross-listed CRNs (same cross-list code in the term) and linked CRNs.

    Banner's search gives a link identifier but not the link rule itself, so sections of one
    course that carry the same identifier are taken as one linked group (a lecture and its labs).
    """
    cross: dict[str, list[str]] = defaultdict(list)
    linked: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for s in sections:
        if s.cross_list:
            cross[s.cross_list].append(s.crn)
        if s.linked and s.link_identifier:
            linked[(s.subject, s.course_number, s.link_identifier)].append(s.crn)
    cross_of = {crn: sorted(c for c in crns if c != crn) for crns in cross.values() for crn in crns}
    linked_of = {crn: sorted(c for c in crns if c != crn) for crns in linked.values() for crn in crns}
    return cross_of, linked_of


def _replace_meetings_and_instructors(
    section: Section, wanted_meetings: list[dict[str, Any]], wanted_links: list[tuple[int, bool]]
) -> bool:
    """Replace a stored section's meetings and instructor links where Banner's differ; True when any did."""
    changed = False
    if sorted(map(_meeting_key, section.meeting_times), key=repr) != sorted(
        map(_meeting_key, wanted_meetings), key=repr
    ):
        section.meeting_times = [MeetingTime(**row) for row in wanted_meetings]
        changed = True
    if sorted((link.instructor_id, link.is_primary) for link in section.instructor_links) != wanted_links:
        section.instructor_links = [
            SectionInstructor(instructor_id=pid, is_primary=primary) for pid, primary in wanted_links
        ]
        changed = True
    return changed


async def import_term_sections(
    session: AsyncSession,
    term_code: str,
    sections: Sequence[BannerSection],
    *,
    now: datetime,
    report: ImportReport,
    complete: bool,
    kind: str = "import",
) -> Term:
    """Upsert one term's sections. ``complete``: the data is the whole term (a full run)."""
    # A CRN listed twice (Banner's list moved while it was paged) is one section: the last wins.
    sections = list({banner.crn: banner for banner in sections}.values())
    lookups = _Lookups()
    await lookups.load(session)
    term = await _term(session, term_code, sections)
    parts = await _parts(session, term, sections)
    existing = {
        s.crn: s
        for s in await session.scalars(
            select(Section)
            .where(Section.term_id == term.id)
            .options(
                selectinload(Section.meeting_times),
                selectinload(Section.instructor_links),
                selectinload(Section.attributes),
            )
        )
    }
    # A course's title is the one most of its sections carry; a section with another title
    # (a topics course, an honors section) keeps its own.
    titles: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for s in sections:
        titles[(s.subject, s.course_number)][s.title] += 1
    cross_of, linked_of = _groups(sections)

    # What the sections point at goes in first, in one flush (ids for the sections), so that the
    # sections and their meetings then go in as large batches: a flush per new course made a
    # term-sized import several times slower (bench/bench_banner_import.py).
    for banner in sections:
        await _course(session, lookups, banner, titles[(banner.subject, banner.course_number)].most_common(1)[0][0])
        await _campus(session, lookups, banner)
        for person in banner.instructors:
            await _instructor(session, lookups, person)
    await session.flush()

    new_meetings: list[tuple[Section, list[dict[str, Any]]]] = []
    for banner in sections:
        key = (banner.subject, banner.course_number)
        course = await _course(session, lookups, banner, titles[key].most_common(1)[0][0])
        campus = await _campus(session, lookups, banner)
        part = parts.get(banner.part_of_term) if banner.part_of_term else None
        values: dict[str, Any] = {
            "course_id": course.id,
            "section_number": banner.sequence,
            "title": banner.title if banner.title != course.title else None,
            "schedule_type": banner.schedule_type,
            "instructional_method": banner.instructional_method,
            "campus_id": campus.id if campus else None,
            "part_of_term_id": part.id if part else None,
            "credits_min": banner.credits_min,
            "credits_max": banner.credits_max,
            "capacity": banner.max_enrollment,
            "enrolled": banner.enrollment,
            "seats_available": banner.seats_available,
            "waitlist_capacity": banner.wait_capacity,
            "waitlist_available": banner.wait_available,
            "cancelled": False,
            "cross_list_group": banner.cross_list,
            "cross_listed_crns": cross_of.get(banner.crn, []),
            "link_identifier": banner.link_identifier,
            "linked_crns": linked_of.get(banner.crn, []),
        }
        people = [(await _instructor(session, lookups, p), p.primary) for p in banner.instructors]
        wanted_links = sorted({(person.id, primary) for person, primary in people})
        wanted_meetings = [row for meeting in banner.meetings for row in meeting_rows(meeting)]
        wanted_attributes = sorted(set(banner.attributes))

        section = existing.get(banner.crn)
        if section is None:
            section = Section(term_id=term.id, crn=banner.crn, **values)
            # Meetings of new sections go in afterwards as one bulk insert (see below).
            new_meetings.append((section, wanted_meetings))
            section.instructor_links = [
                SectionInstructor(instructor_id=pid, is_primary=primary) for pid, primary in wanted_links
            ]
            section.attributes = [SectionAttribute(code=c, description=d) for c, d in wanted_attributes]
            session.add(section)
            existing[banner.crn] = section
            report.created += 1
        else:
            changed = False
            for name, value in values.items():
                if getattr(section, name) != value:
                    setattr(section, name, value)
                    changed = True
            if _replace_meetings_and_instructors(section, wanted_meetings, wanted_links):
                changed = True
            if sorted((a.code, a.description or "") for a in section.attributes) != wanted_attributes:
                section.attributes = [SectionAttribute(code=c, description=d) for c, d in wanted_attributes]
                changed = True
            report.updated += changed
            report.unchanged += not changed
            if changed:
                report.changed_sections.append((term_code, banner.crn))
        if kind == "sync":
            # A full read of the section from Banner: the 36-hour refresh rule counts from here.
            # A file import is not one (the file may be old), so it leaves the time alone.
            section.banner_synced_at = now
            section.seats_synced_at = now
    await session.flush()
    if new_meetings:
        # One executemany instead of an INSERT ... RETURNING per row: the ORM cannot batch
        # those on SQLite, and meetings are most of the rows of a first import.
        await session.execute(
            insert(MeetingTime),
            [{"section_id": section.id, **row} for section, rows in new_meetings for row in rows],
        )
    if complete:
        if kind == "sync":
            term.sections_synced_at = now
        else:
            term.catalog_imported_at = now
    report.terms.append(term_code)
    return term


async def refresh_section_from_banner(
    session: AsyncSession,
    section: Section,
    meetings: Sequence[BannerMeeting],
    instructors: Sequence[BannerInstructor],
    *,
    now: datetime,
) -> bool:
    """One section's meetings and instructors as Banner gives them now (the stale-section refresh).

    ``section`` must have its meetings and instructor links loaded. Returns whether anything
    changed; ``banner_synced_at`` is set either way, since Banner was read in full.
    """
    lookups = _Lookups()
    await lookups.load_instructors(session)
    people = [(await _instructor(session, lookups, p), p.primary) for p in instructors]
    await session.flush()  # ids of instructors seen for the first time
    wanted_links = sorted({(person.id, primary) for person, primary in people})
    wanted_meetings = [row for meeting in meetings for row in meeting_rows(meeting)]
    changed = _replace_meetings_and_instructors(section, wanted_meetings, wanted_links)
    section.banner_synced_at = now
    return changed


async def cancel_missing_sections(session: AsyncSession, term: Term, seen_crns: set[str]) -> list[str]:
    """After a complete live sync: a section Banner no longer lists is cancelled, not deleted,
    so ``get_section`` can still say so (seed 000: "one section by CRN, cancelled or not")."""
    gone = [
        section
        for section in await session.scalars(
            select(Section).where(Section.term_id == term.id, Section.cancelled.is_(False))
        )
        if section.crn not in seen_crns
    ]
    for section in gone:
        section.cancelled = True
    return [s.crn for s in gone]
