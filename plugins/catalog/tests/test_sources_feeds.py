"""Degree programs and elective lists from the campus's JSON feeds (file and URL), by their jobs."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import CatalogYear, Program, Term, TermElectiveList
from campus_catalog.sources.catalog_feeds import catalog_years_to_read
from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp import Job
from campus_mcp.testing import CampusFactory, CampusHarness, campus_today
from litestar import Litestar, Response, get
from sqlalchemy import select


def program(slug: str, name: str) -> dict[str, Any]:
    return {
        "slug": slug,
        "name": name,
        "school": "School of Computing and Data Science",
        "degree": "BS",
        "total_credits": 128,
        "plans_of_study": [
            {
                "name": "Standard",
                "semesters": [
                    {
                        "label": "Year 1 Fall",
                        "courses": [{"code": "COMP 1000", "title": "Computer Science I", "credits": 4}],
                    }
                ],
            }
        ],
        "elective_lists": [{"name": "Technical electives", "courses": ["COMP 4960"], "notes": None}],
    }


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def feeds_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "BANNER_URL",
        "BANNER_FILE",
        "CALENDAR_URL",
        "CALENDAR_FILE",
        "PROGRAMS_URL",
        "PROGRAMS_FILE",
        "ELECTIVES_URL",
        "ELECTIVES_FILE",
    ):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
    return monkeypatch


def job(campus: CampusHarness, job_id: str) -> Job:
    return campus.registry.jobs[job_id]


async def programs(campus: CampusHarness) -> dict[str, list[str]]:
    async with campus.sessions() as session:
        rows = await session.execute(
            select(CatalogYear.label, Program.slug).join(Program, Program.catalog_year_id == CatalogYear.id)
        )
    found: dict[str, list[str]] = {}
    for label, slug in rows:
        found.setdefault(label, []).append(slug)
    return {label: sorted(slugs) for label, slugs in found.items()}


async def test_programs_from_a_file_are_upserted_and_a_bad_entry_is_reported(
    campus_factory: CampusFactory, feeds_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    feed = write(
        tmp_path / "programs.json",
        {"catalog_year": "2026-2027", "programs": [program("bs-cs", "Computer Science"), {"slug": "bs-broken"}]},
    )
    feeds_env.setenv("CAMPUS_MCP_CATALOG_PROGRAMS_FILE", str(feed))
    campus = await campus_factory(plugins=["catalog"])
    run = await campus.run_job(job(campus, "catalog.degree_requirements_import"))
    assert (run.outcome, run.items) == ("partial", 1)
    assert run.lost == {"program bs-broken": "name: Field required"}
    assert await programs(campus) == {"2026-2027": ["bs-cs"]}

    write(feed, {"catalog_year": "2026-2027", "programs": [program("bs-ds", "Data Science")]})
    again = await campus.run_job(job(campus, "catalog.degree_requirements_import"))
    assert (again.outcome, again.items) == ("ok", 1)
    assert await programs(campus) == {"2026-2027": ["bs-ds"]}  # the year's feed is the whole year
    async with campus.sessions() as session:
        year = await session.scalar(select(CatalogYear))
        assert year is not None and year.imported_at is not None and year.start_year == 2026


async def test_programs_feed_reads_the_current_catalog_year_and_the_one_before(
    campus_factory: CampusFactory, feeds_env: pytest.MonkeyPatch
) -> None:
    current, before = catalog_years_to_read(campus_today())

    @get("/export/{name:str}")
    async def export(name: str) -> Response[Any]:
        if name == f"programs-{before}.json":
            return Response("busy", status_code=503, media_type="text/plain")
        year = name.removeprefix("programs-").removesuffix(".json")
        return Response({"catalog_year": year, "programs": [program("bs-cs", "Computer Science")]})

    async with serve_on_loopback(Litestar([export])) as origin:
        feeds_env.setenv("CAMPUS_MCP_CATALOG_PROGRAMS_URL", f"{origin}/export/programs-{{catalog_year}}.json")
        campus = await campus_factory(plugins=["catalog"])
        run = await campus.run_job(job(campus, "catalog.degree_requirements_import"))
    assert (run.outcome, run.items) == ("partial", 1)
    assert run.lost == {
        f"catalog year {before}": f"server: programs feed {before} answered HTTP 503 (retried on the next run)"
    }
    assert await programs(campus) == {current: ["bs-cs"]}


async def test_elective_lists_by_term_and_url(
    campus_factory: CampusFactory, feeds_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    feed = write(
        tmp_path / "electives.json",
        {
            "lists": [
                {
                    "term": "202710",
                    "school": "School of Engineering",
                    "title": "Fall 2026 technical electives",
                    "url": "https://registrar.example.edu/electives/eng-fall-2026.pdf",
                    "course_headings": [{"code": "ELEC 4500", "title": "Power Systems", "crns": ["10234"]}],
                    "full_text": "ELEC 4500 Power Systems ...",
                },
                {"term": "209910", "school": "X", "title": "Y", "url": "https://registrar.example.edu/far.pdf"},
            ]
        },
    )
    feeds_env.setenv("CAMPUS_MCP_CATALOG_ELECTIVES_FILE", str(feed))
    campus = await campus_factory(plugins=["catalog"])
    async with campus.sessions() as session:
        session.add(Term(uid="202710", name="Fall 2026", start_date=date(2026, 9, 8), end_date=date(2026, 12, 18)))
        await session.commit()
    run = await campus.run_job(job(campus, "catalog.term_electives_import"))
    assert (run.outcome, run.items) == ("partial", 1)
    assert run.lost == {"list https://registrar.example.edu/far.pdf": "no term '209910' in the catalog"}
    again = await campus.run_job(job(campus, "catalog.term_electives_import"))
    assert again.items == 1
    async with campus.sessions() as session:
        lists = (await session.scalars(select(TermElectiveList))).all()
    assert len(lists) == 1 and lists[0].fetched_at is not None
    assert lists[0].course_headings[0]["code"] == "ELEC 4500"
