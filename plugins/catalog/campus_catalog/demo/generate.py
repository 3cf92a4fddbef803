"""The demo campus generator: a believable catalog from a fixed seed.

At scale 1: 5 terms (three with sections), 30 subjects, 163 courses, 1,500 sections with real
meeting patterns, 300 instructors, 5,000 reviews, 10 programs in two catalog years, term
elective lists, finals and the academic calendar. ``scale`` multiplies the sections, instructors
and reviews (``campus-mcp demo --scale 200`` gives 300,000 sections and 1,000,000 reviews).

Why it is built the way it is:

- Rows go in with Core ``insert(table)`` executemany in chunks and explicit ids, so a scaled
  campus loads without the ORM's per-object cost and rows can point at each other without
  round trips. PostgreSQL's id sequences are moved past the explicit ids afterwards.
- The model is the slow part of a load (about 90 ms of CPU for a course description), so the
  demo's texts come from ``vectors.npz`` (see ``vectors.py``), each course text is embedded once
  and its sections share the vector, an instructor's vector is the mean of the
  courses they teach, and a review's vector is the mean of the vectors of its sentences (reviews
  are built from the sentences in ``people.py``). A scaled campus costs no more model time.
- Nothing depends on the clock but the dates (see ``calendar.py``) and the "last refreshed"
  times, which are set a few hours before now so the advisory has believable times.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
from campus_mcp.jobs import JobRun
from sqlalchemy import Table, bindparam, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import models as m
from campus_catalog import semantic
from campus_catalog.demo import people
from campus_catalog.demo.calendar import DemoTerm, calendar_events, terms_around
from campus_catalog.demo.courses import COURSES, HSS_SUBJECTS, SCHOOLS, SUBJECTS, CourseKind
from campus_catalog.demo.programs import PROGRAMS
from campus_catalog.demo.vectors import demo_vectors

SEED = 20260917
SECTIONS = 1500
INSTRUCTORS = 300
REVIEWS = 5000
CHUNK = 5000
# Share of the sections in each of the three terms with sections: past, current, next.
TERM_SHARES = (0.30, 0.37, 0.33)

BUILDINGS = {
    "computing": ("BEAT", "Beatty Hall"),
    "engineering": ("WENT", "Wentworth Hall"),
    "design": ("ANDR", "Anderson Hall"),
    "management": ("WATS", "Watson Hall"),
    "sciences": ("DOBB", "Dobbs Hall"),
}
LAB_BUILDING = ("IRAL", "Ira Allen Center")

MWF_STARTS = (480, 540, 600, 660, 720, 780, 840)
TR_STARTS = (480, 570, 660, 750, 840, 930)
LAB_STARTS = (480, 780, 1080)


@dataclasses.dataclass
class _Course:
    id: int
    code: str
    subject: str
    number: str
    title: str
    kind: CourseKind
    credits: float
    weight: int
    embedding: bytes


@dataclasses.dataclass
class _Loader:
    session: AsyncSession
    rng: random.Random
    scale: int
    today: date
    now: datetime
    courses: list[_Course] = dataclasses.field(default_factory=list)
    instructors_by_subject: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    taught: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    section_id: int = 0
    meeting_id: int = 0

    async def insert(self, table: Table, rows: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(rows), CHUNK):
            await self.session.execute(insert(table), list(rows[start : start + CHUNK]))


def _table(model: type[Any]) -> Table:
    table: Table = model.__table__
    return table


async def load_demo_catalog(session: AsyncSession, scale: int = 1) -> None:
    """Fill the catalog tables with the demo campus (the ``DemoData`` loader, order 10)."""
    if scale < 1:
        raise ValueError("The demo scale is a whole number of at least 1.")
    now = datetime.now(UTC).replace(microsecond=0)
    loader = _Loader(session=session, rng=random.Random(SEED), scale=scale, today=now.date(), now=now)
    terms = terms_around(loader.today)
    term_ids = await _load_terms(loader, terms)
    await _load_subjects_and_courses(loader)
    await _load_instructors(loader)
    # terms_around gives [older, past, current, next, later]: the middle three have sections.
    with_sections = terms[1:4]
    for term, share in zip(with_sections, TERM_SHARES, strict=True):
        await _load_sections(loader, term, term_ids[term.uid], round(SECTIONS * scale * share))
    await _load_reviews(loader)
    await _update_instructor_vectors(loader)
    await _load_programs(loader)
    await _load_term_electives(loader, terms[2:4], term_ids)
    await _load_finals(loader, with_sections, term_ids)
    await _load_calendar(loader, terms)
    await _record_job_runs(loader)
    await _move_sequences(session)


# ----------------------------------------------------------------------------- terms


async def _load_terms(loader: _Loader, terms: list[DemoTerm]) -> dict[str, int]:
    rows = []
    parts = []
    synced = loader.now - timedelta(hours=5)
    for i, term in enumerate(terms, start=1):
        has_sections = 2 <= i <= 4
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
    await loader.insert(_table(m.Term), rows)
    await loader.insert(_table(m.PartOfTerm), parts)
    await loader.insert(
        _table(m.Campus),
        [{"id": 1, "code": "BOS", "name": "Boston Main Campus"}, {"id": 2, "code": "ONL", "name": "Online"}],
    )
    return {t.uid: i for i, t in enumerate(terms, start=1)}


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


async def _load_subjects_and_courses(loader: _Loader) -> None:
    subjects = [
        {"id": i, "code": code, "name": name, "school": SCHOOLS[school]}
        for i, (code, (name, school)) in enumerate(SUBJECTS.items(), start=1)
    ]
    await loader.insert(_table(m.Subject), subjects)

    texts: list[str] = []
    rows: list[dict[str, Any]] = []
    course_id = 0
    for subject, courses in COURSES.items():
        earlier: list[str] = []
        for number, title, description, kind in courses:
            course_id += 1
            code = f"{subject} {number}"
            texts.append(semantic.course_text(code, title, description))
            fees = [{"description": "Laboratory fee", "amount": 75.0}] if kind == "lab" else None
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
                    "corequisites": None,
                    "restrictions": _restrictions(subject, number),
                    "mutual_exclusions": None,
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
            _Course(
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
    await loader.insert(_table(m.Course), rows)


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


async def _load_instructors(loader: _Loader) -> None:
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
    await loader.insert(_table(m.Instructor), rows)


# ----------------------------------------------------------------------------- sections


@dataclasses.dataclass
class _Pattern:
    days: tuple[int, ...]
    start: int | None
    end: int | None
    meeting_type: str = "Class"


def _lecture_pattern(rng: random.Random, kind: CourseKind) -> _Pattern:
    if kind == "studio":
        days = rng.choice(((0, 2), (1, 3)))
        start = rng.choice((540, 780))
        return _Pattern(days, start, start + 230)
    if kind == "sem" and rng.random() < 0.4:
        day = rng.choice((0, 1, 2, 3))
        return _Pattern((day,), 1080, 1230)  # one evening a week, 6:00 to 8:30 PM
    roll = rng.random()
    if roll < 0.55:
        start = rng.choice(MWF_STARTS)
        return _Pattern((0, 2, 4), start, start + 50)
    if roll < 0.93:
        start = rng.choice(TR_STARTS)
        return _Pattern((1, 3), start, start + 75)
    return _Pattern((0, 2), 1080, 1155)  # evening MW, 75 minutes


def _seats(rng: random.Random, capacity: int, past: bool) -> dict[str, Any]:
    """Enrollment and waitlist: some full with a waitlist, some full without, some unread."""
    roll = rng.random()
    if past or roll < 0.16:
        enrolled = capacity + (1 if rng.random() < 0.05 else 0)
        kind = rng.random()
        if kind < 0.35:
            waitlist = (0, 0)  # no waitlist: a full section needs a capacity override
        elif kind < 0.75:
            cap = rng.choice((5, 10, 15))
            waitlist = (cap, rng.randint(1, cap))
        else:
            cap = rng.choice((5, 10))
            waitlist = (cap, 0)
        wl_cap: int | None = waitlist[0]
        wl_open: int | None = waitlist[1]
    else:
        enrolled = int(capacity * rng.uniform(0.3, 0.97))
        wl_cap = wl_open = rng.choice((0, 10))  # an open section's waitlist is empty
        if rng.random() < 0.1:
            wl_cap = wl_open = None  # not read from Banner yet
    return {
        "capacity": capacity,
        "enrolled": enrolled,
        "seats_available": capacity - enrolled,
        "waitlist_capacity": wl_cap,
        "waitlist_available": wl_open,
    }


async def _load_sections(loader: _Loader, term: DemoTerm, term_id: int, target: int) -> None:
    rng = loader.rng
    past = term.end < loader.today
    cumulative = list(itertools.accumulate(c.weight for c in loader.courses))
    campus_building = {code: BUILDINGS[school] for code, (_, school) in SUBJECTS.items()}
    parts = {"1": 3 * term_id - 2, "A": 3 * term_id - 1, "B": 3 * term_id}
    sections: list[dict[str, Any]] = []
    meetings: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    attributes: list[dict[str, Any]] = []
    section_counts: dict[int, int] = {}
    crn = 10000 if term.season == "Fall" else 20000 if term.season == "Spring" else 30000
    made = 0
    cross_list_done: set[str] = set()
    synced = (
        loader.now - timedelta(hours=rng.randint(2, 20))
        if not past
        else datetime.combine(term.end, datetime.min.time(), UTC)
    )

    async def flush() -> None:
        await loader.insert(_table(m.Section), sections)
        await loader.insert(_table(m.MeetingTime), meetings)
        await loader.insert(_table(m.SectionInstructor), links)
        await loader.insert(_table(m.SectionAttribute), attributes)
        for batch in (sections, meetings, links, attributes):
            batch.clear()

    def add_section(
        course: _Course,
        pattern: _Pattern,
        *,
        schedule_type: str,
        method: str,
        online: bool,
        part: str,
        capacity: int,
        instructor: int | None,
        link: str | None,
        cancelled: bool,
        cross_group: str | None = None,
    ) -> dict[str, Any]:
        nonlocal crn
        loader.section_id += 1
        crn += 1
        number = section_counts.get(course.id, 0) + 1
        section_counts[course.id] = number
        seats = _seats(rng, capacity, past)
        if cancelled:
            seats.update(enrolled=0, seats_available=capacity)
        part_row = {
            "1": (term.start, term.end),
            "A": (term.start, term.start + timedelta(weeks=7, days=-3)),
            "B": (term.start + timedelta(weeks=7), term.end),
        }[part]
        row = {
            "id": loader.section_id,
            "term_id": term_id,
            "course_id": course.id,
            "crn": str(crn),
            "section_number": ("W" if online else "") + f"{number:02d}",
            "title": None,
            "schedule_type": schedule_type,
            "instructional_method": method,
            "campus_id": 2 if online else 1,
            "part_of_term_id": parts[part],
            "credits_min": 0.0 if schedule_type == "Laboratory" else course.credits,
            "credits_max": 0.0 if schedule_type == "Laboratory" else course.credits,
            "cancelled": cancelled,
            "cross_list_group": cross_group,
            "cross_listed_crns": [],
            "link_identifier": link,
            "linked_crns": [],
            "banner_synced_at": synced,
            "seats_synced_at": None if past else loader.now - timedelta(minutes=rng.randint(5, 40)),
            "embedding": course.embedding,
            **seats,
        }
        sections.append(row)
        building = LAB_BUILDING if pattern.meeting_type == "Lab" else campus_building[course.subject]
        room = f"{rng.randint(1, 4)}{rng.randint(0, 3)}{rng.randint(0, 9)}"
        if online:
            meetings.append(_meeting(loader, row["id"], None, None, None, part_row, None, None, "Class"))
        for day in pattern.days:
            meetings.append(
                _meeting(
                    loader, row["id"], day, pattern.start, pattern.end, part_row, building, room, pattern.meeting_type
                )
            )
        if instructor is not None:
            links.append({"section_id": row["id"], "instructor_id": instructor, "is_primary": True})
            loader.taught.setdefault(instructor, set()).add(course.id)
        if course.subject in HSS_SUBJECTS:
            attributes.append(
                {"section_id": row["id"], "code": "HSS", "description": "Humanities and Social Sciences Elective"}
            )
        if course.subject in {"COMP", "DATA", "CYBR"} and course.number >= "3000":
            attributes.append({"section_id": row["id"], "code": "TECH", "description": "Technical Elective"})
        if rng.random() < 0.03:
            attributes.append({"section_id": row["id"], "code": "HON", "description": "Honors"})
        return row

    # Every course is offered once each term, then the popular (lower-level) ones again and again.
    first_round = list(loader.courses)
    while made < target:
        course = first_round.pop(0) if first_round else rng.choices(loader.courses, cum_weights=cumulative)[0]
        pool = loader.instructors_by_subject[course.subject]
        instructor = None if rng.random() < 0.03 else rng.choice(pool)
        online = course.kind in {"lec", "sem"} and rng.random() < 0.09
        hybrid = not online and course.kind == "lec" and rng.random() < 0.05
        part = "1" if rng.random() > 0.05 else rng.choice("AB")
        cancelled = rng.random() < 0.03
        method = "Online" if online else "Hybrid" if hybrid else "Face-to-Face"
        pattern = _Pattern((), None, None) if online else _lecture_pattern(rng, course.kind)
        if hybrid:
            pattern = _Pattern(pattern.days[:1], pattern.start, pattern.end)
        schedule_type = {"lec": "Lecture", "lab": "Lecture", "studio": "Studio", "sem": "Seminar"}[course.kind]
        capacity = {"lec": rng.choice((30, 35, 40)), "lab": 48, "studio": 16, "sem": rng.choice((20, 25))}[course.kind]
        if online:
            capacity = 30
        link = None
        if course.kind == "lab":
            link = f"L{section_counts.get(course.id, 0) + 1}"
        lecture = add_section(
            course,
            pattern,
            schedule_type=schedule_type,
            method=method,
            online=online,
            part=part,
            capacity=capacity,
            instructor=instructor,
            link=link,
            cancelled=cancelled,
        )
        made += 1
        if course.kind == "lab":
            # A lecture and its labs: Banner links them, and a student must take one lab with it.
            labs = []
            for _ in range(2 if rng.random() < 0.6 else 1):
                day = rng.choice([d for d in range(5) if d not in pattern.days] or [4])
                start = rng.choice(LAB_STARTS)
                lab_instructor = instructor if rng.random() < 0.5 else rng.choice(pool)
                labs.append(
                    add_section(
                        course,
                        _Pattern((day,), start, start + 170, "Lab"),
                        schedule_type="Laboratory",
                        method="Face-to-Face",
                        online=False,
                        part=part,
                        capacity=24,
                        instructor=lab_instructor,
                        link=f"B{link[1:]}" if link else None,
                        cancelled=cancelled,
                    )
                )
                made += 1
            lecture["linked_crns"] = [lab["crn"] for lab in labs]
            for lab in labs:
                lab["linked_crns"] = [lecture["crn"]]
        elif course.code in ("ENGR 3000", "CIVE 3500") and course.code not in cross_list_done and not online:
            # A cross-listed pair: one room, one meeting pattern, two course codes.
            cross_list_done.add(course.code)
            twin_code = {"ENGR 3000": "PHIL 2100", "CIVE 3500": "CHEM 2500"}[course.code]
            twin = next(c for c in loader.courses if c.code == twin_code)
            group = f"X{len(cross_list_done):02d}"
            lecture["cross_list_group"] = group
            other = add_section(
                twin,
                pattern,
                schedule_type=schedule_type,
                method=method,
                online=False,
                part=part,
                capacity=capacity,
                instructor=instructor,
                link=None,
                cancelled=cancelled,
                cross_group=group,
            )
            made += 1
            lecture["cross_listed_crns"] = [other["crn"]]
            other["cross_listed_crns"] = [lecture["crn"]]
        if len(sections) >= CHUNK:
            await flush()
    await flush()


def _meeting(
    loader: _Loader,
    section_id: int,
    weekday: int | None,
    start: int | None,
    end: int | None,
    dates: tuple[date, date],
    building: tuple[str, str] | None,
    room: str | None,
    meeting_type: str,
) -> dict[str, Any]:
    loader.meeting_id += 1
    return {
        "id": loader.meeting_id,
        "section_id": section_id,
        "weekday": weekday,
        "start_minute": start,
        "end_minute": end,
        "start_date": dates[0],
        "end_date": dates[1],
        "building": building[0] if building else None,
        "building_name": building[1] if building else None,
        "room": room,
        "meeting_type": meeting_type,
    }


# ----------------------------------------------------------------------------- reviews


class _SentenceVectors:
    """The model's vector of each review sentence, computed once; a review is their mean."""

    def __init__(self) -> None:
        pools = people.PRAISE + people.COMPLAINT + people.MIXED + people.ADVICE
        matrix = np.vstack([semantic.from_bytes(b) for b in demo_vectors(pools)])
        self.index = {sentence: i for i, sentence in enumerate(pools)}
        self.matrix = matrix
        self.cache: dict[tuple[int, ...], bytes] = {}

    def review(self, sentences: Sequence[str]) -> bytes:
        key = tuple(self.index[s] for s in sentences)
        blob = self.cache.get(key)
        if blob is None:
            mean = self.matrix[list(key)].mean(axis=0)
            blob = semantic.to_bytes(mean / np.linalg.norm(mean))
            self.cache[key] = blob
        return blob


def _review_text(rng: random.Random, overall: int) -> list[str]:
    if overall >= 4:
        sentences = rng.sample(people.PRAISE, rng.choice((1, 2, 2, 3)))
    elif overall <= 2:
        sentences = rng.sample(people.COMPLAINT, rng.choice((1, 2, 2, 3)))
    else:
        sentences = [rng.choice(people.MIXED)]
        if rng.random() < 0.5:
            sentences.append(rng.choice(people.PRAISE if rng.random() < 0.5 else people.COMPLAINT))
    if rng.random() < 0.3:
        sentences.append(rng.choice(people.ADVICE))
    return sentences


def _tags(rng: random.Random, overall: int) -> list[str]:
    pool = people.PRAISE_TAGS if overall >= 4 else people.COMPLAINT_TAGS if overall <= 2 else people.NEUTRAL_TAGS
    tags = rng.sample(pool, rng.randint(0, 2))
    if rng.random() < 0.3:
        tags.append(rng.choice(people.NEUTRAL_TAGS))
    return list(dict.fromkeys(tags))


async def _load_reviews(loader: _Loader) -> None:
    rng = loader.rng
    vectors = _SentenceVectors()
    course_code = {c.id: c.code for c in loader.courses}
    instructors = sorted(loader.taught)
    # Some instructors are loved, some are not, and most are in between; a tenth have no reviews.
    reviewed = [i for i in instructors if rng.random() > 0.1]
    quality = {i: min(5.0, max(1.0, rng.gauss(3.6, 0.9))) for i in reviewed}
    hardness = {i: min(5.0, max(1.0, rng.gauss(3.0, 0.8))) for i in reviewed}
    popularity = [rng.paretovariate(1.6) for _ in reviewed]
    # Cumulative once: weights= would add them all up again for each of a million reviews.
    cumulative = list(itertools.accumulate(popularity))
    summary: dict[int, list[tuple[int, int, bool | None, list[str]]]] = {}
    rows: list[dict[str, Any]] = []
    total = REVIEWS * loader.scale
    for review_id in range(1, total + 1):
        instructor = rng.choices(reviewed, cum_weights=cumulative)[0]
        overall = int(min(5, max(1, round(rng.gauss(quality[instructor], 0.9)))))
        difficulty = int(min(5, max(1, round(rng.gauss(hardness[instructor], 0.9)))))
        would = None if rng.random() < 0.15 else overall >= 3 and rng.random() < 0.9
        sentences = _review_text(rng, overall)
        tags = _tags(rng, overall)
        course = rng.choice(sorted(loader.taught[instructor]))
        summary.setdefault(instructor, []).append((overall, difficulty, would, tags))
        rows.append(
            {
                "id": review_id,
                "instructor_id": instructor,
                "course_code": course_code[course],
                "posted_on": loader.today - timedelta(days=rng.randint(3, 3 * 365)),
                "overall": float(overall),
                "difficulty": float(difficulty),
                "would_take_again": would,
                "grade": rng.choice(people.GRADES),
                "tags": tags,
                "text": " ".join(sentences),
                "sentiment": round((overall - 3) / 2, 2),
                "embedding": vectors.review(sentences),
            }
        )
        if len(rows) >= CHUNK:
            await loader.insert(_table(m.Review), rows)
            rows.clear()
    await loader.insert(_table(m.Review), rows)

    ratings = []
    for instructor, items in summary.items():
        answered = [w for _, _, w, _ in items if w is not None]
        tag_counts: dict[str, int] = {}
        for *_, tags in items:
            for tag in tags:
                tag_counts[tag] = tag_counts.get(tag, 0) + 1
        ratings.append(
            {
                "instructor_id": instructor,
                "overall": round(sum(o for o, *_ in items) / len(items), 1),
                "difficulty": round(sum(d for _, d, *_ in items) / len(items), 1),
                "would_take_again_percent": round(100 * sum(answered) / len(answered), 1) if answered else None,
                "rating_count": len(items),
                "distribution": {str(k): sum(1 for o, *_ in items if o == k) for k in range(1, 6)},
                "tag_counts": dict(sorted(tag_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
                "fetched_at": loader.now - timedelta(days=1, hours=3),
            }
        )
    await loader.insert(_table(m.InstructorRating), ratings)


async def _update_instructor_vectors(loader: _Loader) -> None:
    """An instructor means what they teach: the mean of their courses' vectors."""
    blobs = {c.id: c.embedding for c in loader.courses}
    table = _table(m.Instructor)
    updates = [
        {"b_id": instructor, "b_embedding": semantic.mean_vector([blobs[c] for c in sorted(courses)])}
        for instructor, courses in loader.taught.items()
    ]
    statement = update(table).where(table.c.id == bindparam("b_id")).values(embedding=bindparam("b_embedding"))
    for start in range(0, len(updates), CHUNK):
        await loader.session.execute(statement, updates[start : start + CHUNK])


# ----------------------------------------------------------------------------- programs, electives, finals, calendar


async def _load_programs(loader: _Loader) -> None:
    start_year = loader.today.year if loader.today.month >= 7 else loader.today.year - 1
    titles = {c.code: (c.title, c.credits) for c in loader.courses}
    years = [
        {
            "id": 1,
            "label": f"{start_year - 1}-{start_year}",
            "start_year": start_year - 1,
            "imported_at": loader.now - timedelta(days=40),
        },
        {
            "id": 2,
            "label": f"{start_year}-{start_year + 1}",
            "start_year": start_year,
            "imported_at": loader.now - timedelta(days=9),
        },
    ]
    await loader.insert(_table(m.CatalogYear), years)
    rows: list[dict[str, Any]] = []
    for year in years:
        for program in PROGRAMS:
            semesters: list[dict[str, Any]] = []
            for label, codes in program.semesters:
                courses: list[dict[str, Any]] = []
                for code in codes:
                    if code in titles:
                        title, credits = titles[code]
                        courses.append({"code": code, "title": title, "credits": credits})
                    else:
                        courses.append({"code": None, "title": code, "credits": 3.0 if "Elective" in code else None})
                semesters.append({"label": label, "courses": courses})
            total = sum(c["credits"] or 0 for s in semesters for c in s["courses"])
            rows.append(
                {
                    "id": len(rows) + 1,
                    "catalog_year_id": year["id"],
                    "slug": program.slug,
                    "name": program.name,
                    "school": SCHOOLS[program.school],
                    "degree": program.degree,
                    "url": f"https://catalog.demo.campus.edu/{year['label']}/programs/{program.slug}",
                    "total_credits": total,
                    "plans_of_study": [{"name": "Plan of study", "semesters": semesters}],
                    "elective_lists": [
                        {"name": name, "courses": list(codes), "notes": notes}
                        for name, codes, notes in program.electives
                    ],
                }
            )
    await loader.insert(_table(m.Program), rows)


async def _load_term_electives(loader: _Loader, terms: Sequence[DemoTerm], term_ids: dict[str, int]) -> None:
    lists: dict[str, tuple[str, Callable[[_Course], bool]]] = {
        "sciences": ("Humanities and Social Sciences Electives", lambda c: c.subject in HSS_SUBJECTS),
        "computing": ("Technical Electives", lambda c: c.subject in {"COMP", "DATA", "CYBR"} and c.number >= "3000"),
        "engineering": (
            "Engineering Electives",
            lambda c: c.subject in {"ELEC", "MECH", "CIVE", "BMED"} and c.number >= "3000",
        ),
    }
    rows: list[dict[str, Any]] = []
    for term in terms:
        term_id = term_ids[term.uid]
        found = await loader.session.execute(
            select(m.Section.course_id, m.Section.crn).where(
                m.Section.term_id == term_id, m.Section.cancelled.is_(False)
            )
        )
        crns: dict[int, list[str]] = {}
        for course_id, crn in found:
            crns.setdefault(course_id, []).append(crn)
        for school, (title, belongs) in lists.items():
            headings = [
                {"code": c.code, "title": c.title, "crns": sorted(crns[c.id])}
                for c in loader.courses
                if belongs(c) and c.id in crns
            ]
            body = "\n".join(f"{h['code']} {h['title']}  CRNs: {', '.join(h['crns'])}" for h in headings)
            rows.append(
                {
                    "id": len(rows) + 1,
                    "term_id": term_id,
                    "school": SCHOOLS[school],
                    "title": f"{term.name} {title}",
                    "url": f"https://registrar.demo.campus.edu/electives/{term.uid}-{school}.pdf",
                    "fetched_at": loader.now - timedelta(hours=14),
                    "course_headings": headings,
                    "full_text": f"{SCHOOLS[school]}\n{term.name} {title}\n\n{body}\n\n"
                    "Electives not on this list may be added when the school sends them to the Registrar.",
                }
            )
    await loader.insert(_table(m.TermElectiveList), rows)


FINAL_SLOTS = ((480, 600), (660, 780), (870, 990), (1080, 1200))


async def _load_finals(loader: _Loader, terms: Sequence[DemoTerm], term_ids: dict[str, int]) -> None:
    rng = loader.rng
    schedules = []
    exams: list[dict[str, Any]] = []
    for term in terms:
        if term.start > loader.today:
            continue  # the Registrar publishes finals once a term is under way
        term_id = term_ids[term.uid]
        schedules.append(
            {
                "id": term_id,
                "term_id": term_id,
                "source_name": f"Final Exam Schedule {term.name}.pdf",
                "status": "completed",
                "loaded_at": loader.now - timedelta(days=12)
                if term.end >= loader.today
                else datetime.combine(term.finals_start, datetime.min.time(), UTC) - timedelta(days=20),
            }
        )
        found = await loader.session.execute(
            select(m.Section.crn, m.Section.course_id)
            .where(
                m.Section.term_id == term_id,
                m.Section.cancelled.is_(False),
                m.Section.schedule_type != "Laboratory",
                m.Section.campus_id == 1,
            )
            .order_by(m.Section.id)
        )
        for crn, _ in found:
            start, end = rng.choice(FINAL_SLOTS)
            exams.append(
                {
                    "id": len(exams) + 1,
                    "schedule_id": term_id,
                    "term_id": term_id,
                    "crn": crn,
                    "course_code": None,
                    "exam_date": term.finals_start + timedelta(days=rng.randint(0, 4)),
                    "start_minute": start,
                    "end_minute": end,
                    "building": rng.choice(list(BUILDINGS.values()))[0],
                    "room": f"{rng.randint(1, 4)}0{rng.randint(1, 9)}",
                }
            )
    await loader.insert(_table(m.FinalsSchedule), schedules)
    await loader.insert(_table(m.FinalExam), exams)


async def _load_calendar(loader: _Loader, terms: Sequence[DemoTerm]) -> None:
    fetched = loader.now - timedelta(days=(loader.today.weekday() - 5) % 7, hours=3)
    rows = [
        {
            "id": i,
            "source_uid": f"demo-{e.uid}",
            "title": e.title,
            "start_date": e.start,
            "end_date": e.end,
            "all_day": True,
            "starts_at": None,
            "ends_at": None,
            "category": e.category,
            "description": e.description,
            "location": None,
            "last_fetched_at": fetched,
        }
        for i, e in enumerate(calendar_events(list(terms)), start=1)
    ]
    await loader.insert(_table(m.UniversityEvent), rows)


# The catalog jobs (``campus_catalog.jobs``) and how long ago each last finished on the demo campus,
# matching the refresh times set on the rows above.
DEMO_JOB_RUNS = {
    "catalog.sections_sync": timedelta(hours=5),
    "catalog.seat_refresh": timedelta(minutes=20),
    "catalog.course_details_sync": timedelta(hours=6),
    "catalog.ensure_future_terms": timedelta(hours=5, minutes=30),
    "catalog.calendar_import": timedelta(days=2),
    "catalog.degree_requirements_import": timedelta(days=9),
    "catalog.term_electives_import": timedelta(hours=14),
}


async def _record_job_runs(loader: _Loader) -> None:
    """Job-run records, so ``campus-mcp jobs list`` shows a history on the demo campus too."""
    rows: list[dict[str, Any]] = [
        {
            "job_id": job_id,
            "plugin": "catalog",
            "started_at": loader.now - ago - timedelta(minutes=3),
            "finished_at": loader.now - ago,
            "outcome": "ok",
            "items": 0,
            "lost": {},
            "summary": "Demo campus: loaded by the demo generator.",
            "error": None,
        }
        for job_id, ago in DEMO_JOB_RUNS.items()
    ]
    await loader.insert(_table(JobRun), rows)


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


async def _move_sequences(session: AsyncSession) -> None:
    """Explicit ids do not advance PostgreSQL's sequences; move them so later inserts do not collide."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for model in _SEQUENCED:
        name = _table(model).name
        highest = (await session.execute(select(func.max(_table(model).c.id)))).scalar()
        if highest:
            await session.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), {int(highest)})"))
