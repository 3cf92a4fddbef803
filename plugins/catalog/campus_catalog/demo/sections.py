"""Sections of the demo campus with real meeting patterns, seats, waitlists, labs and cross-lists."""

from __future__ import annotations

import dataclasses
import itertools
import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

from campus_catalog import models as m
from campus_catalog.demo.calendar import DemoTerm
from campus_catalog.demo.courses import HSS_SUBJECTS, SUBJECTS, CourseKind
from campus_catalog.demo.loader import CHUNK, DemoCourse, DemoLoader, table

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


async def load_sections(
    loader: DemoLoader, term: DemoTerm, term_id: int, target: int, *, every_course_first: bool = True
) -> None:
    """``target`` sections of ``term``; with ``every_course_first`` each course once before any repeats
    (a small term without it offers what students take most, by weight, not the first subjects' courses)."""
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
        await loader.insert(table(m.Section), sections)
        await loader.insert(table(m.MeetingTime), meetings)
        await loader.insert(table(m.SectionInstructor), links)
        await loader.insert(table(m.SectionAttribute), attributes)
        for batch in (sections, meetings, links, attributes):
            batch.clear()

    def add_section(
        course: DemoCourse,
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
    first_round = list(loader.courses) if every_course_first else []
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
    loader: DemoLoader,
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
