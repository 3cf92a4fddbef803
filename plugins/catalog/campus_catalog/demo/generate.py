"""The demo campus generator: a believable catalog from a fixed seed.

At scale 1: 6 terms (five with sections, three of them past, so a student has a history),
30 subjects, 163 courses, 1,800 sections with real meeting patterns, 300 instructors, 5,000
reviews, 10 programs in two catalog years, term elective lists, finals and the academic calendar.
``scale`` multiplies the sections, instructors and reviews (``campus-mcp demo --scale 200`` gives
360,000 sections and 1,000,000 reviews).

This module orders the steps and makes terms, courses and instructors; ``sections.py``,
``reviews.py`` and ``records.py`` make the rest, ``loader.py`` holds what they share.

Why it is built the way it is:

- Rows go in with Core ``insert(table)`` executemany in chunks and explicit ids, so a scaled
  campus loads without the ORM's per-object cost and rows can point at each other without
  round trips. PostgreSQL's id sequences are moved past the explicit ids afterwards.
- The model is the slow part of a load (tens of milliseconds of CPU per course description), so the
  demo's texts come from ``vectors.npz`` (see ``vectors.py``), each course text is embedded once
  and its sections share the vector, an instructor's vector is the mean of the
  courses they teach, and a review's vector is the mean of the vectors of its sentences (reviews
  are built from the sentences in ``people.py``). A scaled campus costs no more model time.
- Nothing depends on the clock but the dates (see ``calendar.py``) and the "last refreshed"
  times, which are set a few hours before now so the advisory has believable times.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import models as m
from campus_catalog import semantic
from campus_catalog.demo import people
from campus_catalog.demo.calendar import DemoTerm, terms_around, terms_before
from campus_catalog.demo.courses import COURSES, SCHOOLS, SUBJECTS, CourseKind
from campus_catalog.demo.loader import DemoCourse, DemoLoader, table
from campus_catalog.demo.records import load_calendar, load_finals, load_programs, load_term_electives
from campus_catalog.demo.reviews import load_reviews, update_instructor_vectors
from campus_catalog.demo.sections import load_sections
from campus_catalog.demo.vectors import demo_vectors

SEED = 20260917
SECTIONS = 1500
INSTRUCTORS = 300
# Share of the sections in each of the three terms with sections: past, current, next.
TERM_SHARES = (0.30, 0.37, 0.33)
# The older past terms (issue 11: a demo student has three past terms): smaller terms, made last
# from a seed of their own, so every row above (the CRNs tests name) is what it was without them.
HISTORY_SEED = 20251201
HISTORY_SECTIONS = 150


async def load_demo_catalog(session: AsyncSession, scale: int = 1) -> None:
    """Fill the catalog tables with the demo campus (the ``DemoData`` loader, order 10)."""
    if scale < 1:
        raise ValueError("The demo scale is a whole number of at least 1.")
    now = datetime.now(UTC).replace(microsecond=0)
    loader = DemoLoader(session=session, rng=random.Random(SEED), scale=scale, today=now.date(), now=now)
    terms = terms_around(loader.today)
    # terms_around's oldest term had no sections; it and one new term before it are the history.
    history = [terms[0], *terms_before(terms[0], 1)]
    term_ids = await _load_terms(loader, terms, history[1:])
    await _load_subjects_and_courses(loader)
    await _load_instructors(loader)
    # terms_around gives [older, past, current, next, later]: the middle three have sections.
    with_sections = terms[1:4]
    for term, share in zip(with_sections, TERM_SHARES, strict=True):
        await load_sections(loader, term, term_ids[term.uid], round(SECTIONS * scale * share))
    await load_reviews(loader)
    await update_instructor_vectors(loader)
    await load_programs(loader)
    await load_term_electives(loader, terms[2:4], term_ids)
    await load_finals(loader, with_sections, term_ids)
    await load_calendar(loader, terms)
    await _load_history(loader, history, term_ids)
    await _move_sequences(session)
    await _analyze(session)


async def _load_history(loader: DemoLoader, history: list[DemoTerm], term_ids: dict[str, int]) -> None:
    """Sections, finals and calendar of the older past terms, with their own random stream."""
    loader.rng = random.Random(HISTORY_SEED)
    for term in history:
        target = round(HISTORY_SECTIONS * loader.scale)
        await load_sections(loader, term, term_ids[term.uid], target, every_course_first=False)
    await load_finals(loader, history, term_ids)
    # history[0] is terms_around's oldest term, whose calendar is loaded with the others.
    await load_calendar(loader, history[1:])


# ----------------------------------------------------------------------------- terms


async def _load_terms(loader: DemoLoader, terms: list[DemoTerm], earlier: list[DemoTerm]) -> dict[str, int]:
    """``terms`` (terms_around's five) get ids 1-5 as they always had, ``earlier`` the next ids."""
    rows = []
    parts = []
    synced = loader.now - timedelta(hours=5)
    for i, term in enumerate([*terms, *earlier], start=1):
        has_sections = i <= 4 or i > len(terms)  # all but the last of terms_around's
        past = term.end < loader.today
        rows.append(
            {
                "id": i,
                "uid": term.uid,
                "name": term.name,
                "start_date": term.start,
                "end_date": term.end,
                "registration_opens_on": term.registration_opens,
                "registration_closes_on": term.registration_closes,
                # A past term is not refreshed after it ends (seed 000), so its time is its end.
                "sections_synced_at": (datetime.combine(term.end, datetime.min.time(), UTC) if past else synced)
                if has_sections
                else None,
                "catalog_imported_at": None,
                "details_synced_at": (synced - timedelta(hours=1)) if has_sections else None,
            }
        )
        half = term.start + timedelta(weeks=7)
        parts += [
            {
                "id": 3 * i - 2,
                "term_id": i,
                "code": "1",
                "name": "Full Term",
                "start_date": term.start,
                "end_date": term.end,
            },
            {
                "id": 3 * i - 1,
                "term_id": i,
                "code": "A",
                "name": "First Half Term",
                "start_date": term.start,
                "end_date": half - timedelta(days=3),
            },
            {
                "id": 3 * i,
                "term_id": i,
                "code": "B",
                "name": "Second Half Term",
                "start_date": half,
                "end_date": term.end,
            },
        ]
    await loader.insert(table(m.Term), rows)
    await loader.insert(table(m.PartOfTerm), parts)
    await loader.insert(
        table(m.Campus),
        [{"id": 1, "code": "BOS", "name": "Boston Main Campus"}, {"id": 2, "code": "ONL", "name": "Online"}],
    )
    return {t.uid: i for i, t in enumerate([*terms, *earlier], start=1)}


# ----------------------------------------------------------------------------- courses


def _credits(kind: CourseKind, number: str) -> float:
    if kind == "lab":
        return 4.0
    if kind == "studio":
        return 5.0 if number.startswith(("1", "2")) else 4.0
    return 3.0


def _prerequisites(subject: str, number: str, earlier: list[str]) -> dict[str, Any] | None:
    """Each course after the first of its subject needs the one before it; upper-level courses
    need a C or better, and a few accept either of two courses."""
    if not earlier or number.startswith("1"):
        return None
    previous = earlier[-1]
    leaf: dict[str, Any] = {"course": f"{subject} {previous}"}
    if number >= "3000":
        leaf["min_grade"] = "C"
    if len(earlier) >= 3 and number >= "3000":
        return {
            "op": "and",
            "items": [leaf, {"op": "or", "items": [{"course": f"{subject} {earlier[0]}"}, {"course": "MATH 1750"}]}],
        }
    return {"op": "and", "items": [leaf]}


def _restrictions(subject: str, number: str) -> list[dict[str, Any]] | None:
    if number >= "4000":
        return [{"kind": "include", "type": "class", "values": ["Junior", "Senior"]}]
    if subject in {"ARCH", "INDS", "INTD"} and number >= "2000":
        return [{"kind": "include", "type": "major", "values": [SUBJECTS[subject][0]]}]
    return None


async def _load_subjects_and_courses(loader: DemoLoader) -> None:
    subjects = [
        {"id": i, "code": code, "name": name, "school": SCHOOLS[school]}
        for i, (code, (name, school)) in enumerate(SUBJECTS.items(), start=1)
    ]
    await loader.insert(table(m.Subject), subjects)

    texts: list[str] = []
    rows: list[dict[str, Any]] = []
    course_id = 0
    for subject, courses in COURSES.items():
        earlier: list[str] = []
        for number, title, description, kind in courses:
            course_id += 1
            code = f"{subject} {number}"
            texts.append(semantic.course_text(title, description, SUBJECTS[subject][0]))
            fees = [{"description": "Laboratory fee", "amount": 75.0}] if kind == "lab" else []
            if kind == "studio":
                fees = [{"description": "Studio materials fee", "amount": 150.0}]
            rows.append(
                {
                    "id": course_id,
                    "subject_code": subject,
                    "course_number": number,
                    "title": title,
                    "description": description,
                    "credits_min": _credits(kind, number),
                    "credits_max": _credits(kind, number),
                    "prerequisites": _prerequisites(subject, number, earlier),
                    # The demo's catalog loaded every detail: [] is none (None would be "not loaded").
                    "corequisites": [],
                    "restrictions": _restrictions(subject, number) or [],
                    "mutual_exclusions": [],
                    "catalog_entry": f"{code} {title} ({_credits(kind, number):g} credits). {description}",
                    "fees": fees,
                    "learning_objectives": [
                        f"Explain the main ideas of {title.lower()}.",
                        f"Apply the methods of {title.lower()} to new problems.",
                        "Communicate results clearly in writing and in presentations.",
                    ],
                    "terms_offered": ["Fall", "Spring"]
                    if number < "3000"
                    else (["Fall"] if int(number) % 2 else ["Spring"]),
                    "details_synced_at": loader.now - timedelta(hours=6),
                }
            )
            earlier.append(number)
    _course_relations(rows)
    vectors = demo_vectors(texts)
    for row, vector in zip(rows, vectors, strict=True):
        row["embedding"] = vector
        kind = next(k for n, _, _, k in COURSES[row["subject_code"]] if n == row["course_number"])
        weight = 3 if row["course_number"].startswith("1") else 2 if row["course_number"].startswith("2") else 1
        loader.courses.append(
            DemoCourse(
                id=row["id"],
                code=f"{row['subject_code']} {row['course_number']}",
                subject=row["subject_code"],
                number=row["course_number"],
                title=row["title"],
                kind=kind,
                credits=row["credits_min"],
                weight=weight,
                embedding=vector,
            )
        )
    await loader.insert(table(m.Course), rows)


def _course_relations(rows: list[dict[str, Any]]) -> None:
    """A few corequisites and mutual exclusions, as real catalogs have."""
    by_code = {f"{r['subject_code']} {r['course_number']}": r for r in rows}
    by_code["PHYS 1750"]["corequisites"] = ["MATH 1850"]
    by_code["MECH 2500"]["corequisites"] = ["MATH 2500"]
    by_code["PHIL 2100"]["mutual_exclusions"] = ["ENGR 3000"]
    by_code["ENGR 3000"]["mutual_exclusions"] = ["PHIL 2100"]
    by_code["MATH 3100"]["mutual_exclusions"] = ["DATA 2000"]
    by_code["DATA 2000"]["mutual_exclusions"] = ["MATH 3100"]


# ----------------------------------------------------------------------------- instructors


def _pub_id(rng: random.Random) -> str:
    return "ins-" + "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(8))


async def _load_instructors(loader: DemoLoader) -> None:
    rng = loader.rng
    subjects = list(SUBJECTS)
    total = INSTRUCTORS * loader.scale
    seen_names: set[str] = set()
    seen_ids: set[str] = set()
    rows = []
    for i in range(1, total + 1):
        subject = subjects[(i - 1) % len(subjects)]
        name = f"{rng.choice(people.FIRST_NAMES)} {rng.choice(people.LAST_NAMES)}"
        tries = 0
        while name in seen_names:
            # A scaled campus outgrows first x last names: add middle initials, more the longer it takes.
            tries += 1
            middle = "".join(f"{rng.choice('ABCDEFGHJKLMNPRSTW')}. " for _ in range(1 + tries // 20))
            name = f"{rng.choice(people.FIRST_NAMES)} {middle}{rng.choice(people.LAST_NAMES)}"
        seen_names.add(name)
        pub_id = _pub_id(rng)
        while pub_id in seen_ids:
            pub_id = _pub_id(rng)
        seen_ids.add(pub_id)
        loader.instructors_by_subject.setdefault(subject, []).append(i)
        rows.append(
            {
                "id": i,
                "pub_id": pub_id,
                "name": name,
                "department": SUBJECTS[subject][0],
                "email": f"{name.split(' ')[-1].lower().replace(chr(39), '')}{i}@demo.campus.edu",
                "rmp_id": str(2_000_000 + i) if rng.random() < 0.85 else None,
                "embedding": None,
            }
        )
    await loader.insert(table(m.Instructor), rows)


_SEQUENCED = (
    m.Term,
    m.PartOfTerm,
    m.Campus,
    m.Subject,
    m.Course,
    m.Section,
    m.MeetingTime,
    m.Instructor,
    m.Review,
    m.CatalogYear,
    m.Program,
    m.TermElectiveList,
    m.UniversityEvent,
    m.FinalsSchedule,
    m.FinalExam,
)


# The tables a search joins, whose sizes the planner weighs: what ANALYZE measures after a load.
_ANALYZED = (m.Section, m.Course, m.MeetingTime, m.SectionInstructor, m.Instructor, m.Review)


async def _analyze(session: AsyncSession) -> None:
    """Give SQLite's planner the campus's statistics, which it never gathers by itself. Without
    them it guessed, and read all 36,030 sections of a --scale 67 term to sort them for a browse
    page of 25 instead of walking courses in order through the indexes. A full ANALYZE of these
    tables is quick, even at --scale 67. PostgreSQL's autovacuum analyzes a
    loaded table within a minute; until it has, estimates are off (a first browse at --scale 67
    was costed high enough to be JIT-compiled, which cost more than it saved)."""
    if session.get_bind().dialect.name != "sqlite":
        return
    for model in _ANALYZED:
        await session.execute(text(f"ANALYZE {table(model).name}"))


async def _move_sequences(session: AsyncSession) -> None:
    """Explicit ids do not advance PostgreSQL's sequences; move them so later inserts do not collide."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for model in _SEQUENCED:
        name = table(model).name
        highest = (await session.execute(select(func.max(table(model).c.id)))).scalar()
        if highest:
            await session.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), {int(highest)})"))
