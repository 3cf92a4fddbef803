"""Banner's prerequisite table into the catalog's prerequisite tree, and the course details job."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.models import Course, Term
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_catalog.sources.prerequisites import UnreadablePrerequisites, parse_prerequisites
from campus_mcp.testing import CampusFactory, campus_today
from sqlalchemy import select, update

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
SUBJECTS = {"Mathematics": "MATH", "Computer Sci & Engr": "CSCE", "Physics": "PHYS"}


def table(*rows: tuple[str, str, str, str, str, str, str, str, str]) -> str:
    """Banner's markup: a header row, then one row per term of the rule (9 cells each)."""
    head = "".join(
        f"<th>{h}</th>" for h in ("And/Or", "", "Test", "Score", "Subject", "Course Number", "Level", "Grade", "")
    )
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>\n" for row in rows)
    return f'<table class="basePreqTable"><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>'


def test_one_course_with_a_minimum_grade() -> None:
    html = table(("", "", "", "", "Mathematics", "151", "Undergraduate", "C", ""))
    assert parse_prerequisites(html, SUBJECTS) == {"course": "MATH 151", "min_grade": "C"}


def test_and_binds_tighter_than_or_and_parentheses_group() -> None:
    html = table(
        ("", "(", "", "", "Mathematics", "151", "Undergraduate", "C", ""),
        ("Or", "", "", "", "Mathematics", "171", "Undergraduate", "C", ")"),
        ("And", "", "", "", "Computer Sci &amp; Engr", "121", "Undergraduate", "D", ""),
        ("Or", "", "ALEKS Math Placement", "75", "", "", "", "", ""),
    )
    assert parse_prerequisites(html, SUBJECTS) == {
        "op": "or",
        "items": [
            {
                "op": "and",
                "items": [
                    {
                        "op": "or",
                        "items": [{"course": "MATH 151", "min_grade": "C"}, {"course": "MATH 171", "min_grade": "C"}],
                    },
                    {"course": "CSCE 121", "min_grade": "D"},
                ],
            },
            {"test": "ALEKS Math Placement", "min_score": "75"},
        ],
    }


def test_no_prerequisites_and_unreadable_ones() -> None:
    assert (
        parse_prerequisites("<h3>Catalog Prerequisites</h3> No prerequisite information available.", SUBJECTS) is None
    )
    with pytest.raises(UnreadablePrerequisites, match="subject 'Underwater Basketry' is not a subject of the catalog"):
        parse_prerequisites(table(("", "", "", "", "Underwater Basketry", "101", "", "", "")), SUBJECTS)
    with pytest.raises(UnreadablePrerequisites, match="a parenthesis is not closed"):
        parse_prerequisites(table(("", "(", "", "", "Physics", "206", "", "", "")), SUBJECTS)


async def test_the_course_details_job_stores_descriptions_and_prerequisites(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE}")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    crn_121 = min(s["courseReferenceNumber"] for s in sections if s["courseNumber"] == "121")
    crn_221 = min(s["courseReferenceNumber"] for s in sections if s["courseNumber"] == "221")
    fake = FakeBanner(
        sections=sections,
        prerequisites={
            crn_221: table(("", "", "", "", "Computer Sci &amp; Engr", "121", "Undergraduate", "C", "")),
            crn_121: table(("", "", "", "", "Basket Weaving", "101", "Undergraduate", "C", "")),
        },
    )
    async with serve_fake_banner(fake) as url:
        for name, value in {
            "BANNER_URL": url,
            "ALLOW_LOOPBACK_HTTP": "true",
            "BANNER_REQUESTS_PER_MINUTE": "6000",
        }.items():
            monkeypatch.setenv(f"CAMPUS_MCP_CATALOG_{name}", value)
        monkeypatch.delenv("CAMPUS_MCP_CATALOG_BANNER_FILE", raising=False)
        campus = await campus_factory(plugins=["catalog"])
        jobs = campus.registry.jobs
        await campus.run_job(jobs["catalog.sections_sync"])
        async with campus.sessions() as session:
            await session.execute(update(Term).values(end_date=campus_today() + timedelta(days=30)))
            await session.commit()
        run = await campus.run_job(jobs["catalog.course_details_sync"])
    assert run.outcome == "partial"
    assert run.lost == {
        f"CRN {crn_121}": "parse: prerequisites of CSCE 121: subject 'Basket Weaving' is not a subject of the catalog (final)"
    }
    async with campus.sessions() as session:
        courses = {c.course_number: c for c in await session.scalars(select(Course))}
    assert courses["221"].prerequisites == {"course": "CSCE 121", "min_grade": "C"}
    assert courses["121"].prerequisites is None and courses["121"].details_synced_at is not None
    assert courses["110"].description == "PROGRAMMING I: the course description."
