"""Programs, term elective lists, finals and the academic calendar of the demo campus.

No job runs: a run the demo made up would show in ``campus-mcp jobs list`` as if it had happened,
for jobs this campus may not even have (the catalog's jobs need their sources configured).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, func, select

from campus_catalog import models as m
from campus_catalog.demo.calendar import DemoTerm, calendar_events
from campus_catalog.demo.courses import HSS_SUBJECTS, SCHOOLS
from campus_catalog.demo.loader import DemoCourse, DemoLoader, table
from campus_catalog.demo.programs import PROGRAMS
from campus_catalog.demo.sections import BUILDINGS


async def load_programs(loader: DemoLoader) -> None:
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
    await loader.insert(table(m.CatalogYear), years)
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
    await loader.insert(table(m.Program), rows)


async def load_term_electives(loader: DemoLoader, terms: Sequence[DemoTerm], term_ids: dict[str, int]) -> None:
    lists: dict[str, tuple[str, Callable[[DemoCourse], bool]]] = {
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
    await loader.insert(table(m.TermElectiveList), rows)


async def _next_id(loader: DemoLoader, rows: Table) -> int:
    """The id after the highest one in ``rows``: a later step (the older past terms) adds to a table."""
    return int(await loader.session.scalar(select(func.max(rows.c.id))) or 0) + 1


FINAL_SLOTS = ((480, 600), (660, 780), (870, 990), (1080, 1200))


async def load_finals(loader: DemoLoader, terms: Sequence[DemoTerm], term_ids: dict[str, int]) -> None:
    rng = loader.rng
    schedules = []
    exams: list[dict[str, Any]] = []
    first_exam = await _next_id(loader, table(m.FinalExam))
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
                    "id": first_exam + len(exams),
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
    await loader.insert(table(m.FinalsSchedule), schedules)
    await loader.insert(table(m.FinalExam), exams)


async def load_calendar(loader: DemoLoader, terms: Sequence[DemoTerm]) -> None:
    fetched = loader.now - timedelta(days=(loader.today.weekday() - 5) % 7, hours=3)
    first = await _next_id(loader, table(m.UniversityEvent))
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
        for i, e in enumerate(calendar_events(list(terms)), start=first)
    ]
    await loader.insert(table(m.UniversityEvent), rows)
