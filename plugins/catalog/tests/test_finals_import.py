"""Final exams from an uploaded CSV and from the text of a registrar's PDF: one row per exam."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from campus_catalog.models import FinalExam, FinalsSchedule
from campus_catalog.sources.banner_sync import import_banner_file
from campus_catalog.sources.finals import import_finals, parse_finals_csv, parse_finals_text
from campus_mcp.testing import CampusFactory
from sqlalchemy import select

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"

CSV = """CRN,Course,Exam Date,Start Time,End Time,Location
45405,CSCE 110,12/10/2021,8:00 AM,10:00 AM,ZACH 582
,CSCE 121,2021-12-11,1:00 PM,3:00 PM,HRBB 124
45406,,12/13/2021,15:30,17:30,
99999,CSCE 999,not a date,8:00 AM,10:00 AM,ZACH 100
"""

# What `pdftotext -layout` gives for a registrar's finals PDF: headings, columns, a footnote.
PDF_TEXT = """\
                      FALL 2021 FINAL EXAMINATION SCHEDULE
Course      Sec  CRN     Day   Date         Time                    Room
CSCE 110    500  45405   Fri   12/10/2021   8:00 - 10:00 AM         ZACH 582
CSCE 121    501  45406   Sat   Dec 11, 2021 1:00 PM - 3:00 PM       HRBB 124
CSCE 221    500  45500   Mon   12/13/2021   TBA
CSCE 222    501          Tue   12/14/2021   3:30 p.m. to 5:30 p.m.  ZACH 350
Page 1 of 3        Exams in rooms marked * are online.
"""


def test_a_csv_row_per_exam() -> None:
    exams, problems = parse_finals_csv(CSV)
    assert [(e.crn, e.course_code, e.exam_date, e.start_minute, e.end_minute, e.building, e.room) for e in exams] == [
        ("45405", "CSCE 110", date(2021, 12, 10), 480, 600, "ZACH", "582"),
        (None, "CSCE 121", date(2021, 12, 11), 780, 900, "HRBB", "124"),
        ("45406", None, date(2021, 12, 13), 930, 1050, None, None),
    ]
    assert [(p.item, p.reason) for p in problems] == [
        ("line 5", "date 'not a date' is not a date (use YYYY-MM-DD or MM/DD/YYYY)")
    ]


def test_a_csv_without_the_needed_columns_says_which() -> None:
    exams, problems = parse_finals_csv("Name,When\nx,y\n")
    assert exams == []
    assert problems[0].reason == "the header needs a date column and a crn or course column"


def test_registrar_pdf_text_one_row_per_exam() -> None:
    exams, problems = parse_finals_text(PDF_TEXT)
    assert [
        (e.line, e.crn, e.course_code, e.exam_date, e.start_minute, e.end_minute, e.building, e.room) for e in exams
    ] == [
        (3, "45405", "CSCE 110", date(2021, 12, 10), 480, 600, "ZACH", "582"),
        (4, "45406", "CSCE 121", date(2021, 12, 11), 780, 900, "HRBB", "124"),
        (6, None, "CSCE 222", date(2021, 12, 14), 930, 1050, "ZACH", "350"),
    ]
    assert [(p.item, p.reason) for p in problems] == [
        ("line 5", "no time range in 'CSCE 221    500  45500   Mon   12/13/2021   TBA'")
    ]


async def test_an_upload_becomes_the_terms_newest_schedule(campus_factory: CampusFactory) -> None:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE}")
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    exams, problems = parse_finals_text(PDF_TEXT)
    async with campus.sessions() as session:
        report = await import_finals(session, "202131", exams, problems, source_name="finals-fall-2021.txt")
        await session.commit()
    assert report.exams == 3
    assert report.unknown_crns == []  # 45405 and 45406 are sections of the term
    assert report.lost() == {"line 5": "no time range in 'CSCE 221    500  45500   Mon   12/13/2021   TBA'"}
    async with campus.sessions() as session:
        schedule = await session.scalar(select(FinalsSchedule))
        assert schedule is not None and schedule.status == "completed" and schedule.loaded_at is not None
        stored = (await session.scalars(select(FinalExam).order_by(FinalExam.exam_date))).all()
    assert [(e.crn, e.course_code, e.exam_date.isoformat()) for e in stored] == [
        ("45405", "CSCE 110", "2021-12-10"),
        ("45406", "CSCE 121", "2021-12-11"),
        (None, "CSCE 222", "2021-12-14"),
    ]


async def test_an_upload_with_no_exam_changes_nothing(campus_factory: CampusFactory) -> None:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE}")
    campus = await campus_factory(plugins=["catalog"])
    await import_banner_file(campus.sessions, BANNER_FIXTURE)
    exams, problems = parse_finals_text("Page 1 of 1\nNothing here\n")
    async with campus.sessions() as session:
        with pytest.raises(
            ValueError, match=re.escape("no exam could be read from wrong.pdf.txt, so nothing was changed")
        ):
            await import_finals(session, "202131", exams, problems, source_name="wrong.pdf.txt")
        assert await session.scalar(select(FinalsSchedule)) is None
        with pytest.raises(ValueError, match="no term '209910'"):
            await import_finals(session, "209910", exams, problems, source_name="x")
