"""Final exams from the schedule an administrator uploads: a CSV file, or the text of the
registrar's PDF (``pdftotext -layout`` output, or the text copied out of the PDF).

One row per exam. A row names a CRN (one section), a course code (every section of the course),
or both; a date; usually a start and end time; and a room. Each upload becomes a new
``FinalsSchedule``; the newest completed one of a term is the one that counts, and its
``loaded_at`` is the "finals" data source's last refresh. An upload with no readable row is
refused whole, so a wrong file never replaces a good schedule. A row that cannot be read is
reported with its line number and reason; the other rows are stored.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from campus_mcp import utcnow
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog.models import FinalExam, FinalsSchedule, Section, Term
from campus_catalog.sources.banner_parse import MappingProblem

COURSE_CODE = re.compile(r"\b([A-Z]{2,5})[ -]?(\d{3,4}[A-Z]?)\b")
CRN = re.compile(r"(?<![\d/:])(\d{5})(?![\d/:])")
_DATE_PATTERNS = (
    (re.compile(r"\b(\d{4}-\d{2}-\d{2})\b"), ("%Y-%m-%d",)),
    (re.compile(r"\b(\d{1,2}/\d{1,2}/\d{4})\b"), ("%m/%d/%Y",)),
    (re.compile(r"\b(\d{1,2}/\d{1,2}/\d{2})\b"), ("%m/%d/%y",)),
    (
        re.compile(r"\b((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2},? \d{4})\b", re.I),
        ("%B %d %Y", "%b %d %Y"),
    ),
)
_CLOCK = r"\d{1,2}(?::\d{2})?\s*(?:[AaPp]\.?[Mm]\.?)?"
TIME_RANGE = re.compile(rf"({_CLOCK})\s*(?:-|–|to)\s*({_CLOCK})")


@dataclass(frozen=True)
class ExamRow:
    line: int
    crn: str | None
    course_code: str | None
    exam_date: date
    start_minute: int | None
    end_minute: int | None
    building: str | None
    room: str | None


@dataclass
class FinalsReport:
    exams: int = 0
    schedule_id: int | None = None
    problems: list[MappingProblem] = field(default_factory=list)
    unknown_crns: list[str] = field(default_factory=list)

    def lost(self) -> dict[str, str]:
        return {p.item: p.reason for p in self.problems}

    def summary(self) -> str:
        unknown = f"; {len(self.unknown_crns)} CRN(s) not in the term's sections" if self.unknown_crns else ""
        return f"{self.exams} exams stored; {len(self.problems)} row(s) could not be read{unknown}"


def parse_date(value: str) -> date | None:
    for pattern, formats in _DATE_PATTERNS:
        match = pattern.search(value)
        if not match:
            continue
        raw = match.group(1).replace(",", "").replace(".", "")
        for fmt in formats:
            try:
                return datetime.strptime(raw, fmt).date()
            except ValueError:
                continue
    return None


def parse_clock(value: str, meridiem_hint: str | None = None) -> int:
    """``"8:00 AM"``, ``"14:30"``, ``"0800"``, ``"8am"`` as minutes after midnight."""
    raw = value.strip().lower().replace(".", "").replace(" ", "")
    meridiem = "pm" if raw.endswith("pm") else "am" if raw.endswith("am") else meridiem_hint
    digits = raw.removesuffix("am").removesuffix("pm")
    if ":" in digits:
        hour_text, minute_text = digits.split(":", 1)
    elif len(digits) in (3, 4):
        hour_text, minute_text = digits[:-2], digits[-2:]
    else:
        hour_text, minute_text = digits, "0"
    hour, minute = int(hour_text), int(minute_text)
    if meridiem == "pm" and hour < 12:
        hour += 12
    if meridiem == "am" and hour == 12:
        hour = 0
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise ValueError(f"{value!r} is not a time of day")
    return hour * 60 + minute


def parse_time_range(value: str) -> tuple[int, int] | None:
    match = TIME_RANGE.search(value)
    if not match:
        return None
    end_text = match.group(2)
    end_meridiem = "pm" if "p" in end_text.lower() else "am" if "a" in end_text.lower() else None
    # "8:00 - 10:00 AM": the first time takes the second one's AM/PM unless that makes it later.
    start = parse_clock(match.group(1), end_meridiem)
    end = parse_clock(end_text)
    if start > end and end_meridiem == "pm":
        start = parse_clock(match.group(1), "am")
    return start, end


def split_location(value: str) -> tuple[str | None, str | None]:
    """``"WENTW 210"`` gives building WENTW, room 210; one word is a building."""
    words = value.split()
    if not words:
        return None, None
    if len(words) == 1:
        return words[0][:50], None
    return " ".join(words[:-1])[:50], words[-1][:50]


_HEADERS = {
    "crn": ("crn", "course reference number"),
    "course": ("course", "course code", "course_code", "class"),
    "date": ("date", "exam date", "exam_date", "day"),
    "start": ("start", "start time", "start_time", "begin"),
    "end": ("end", "end time", "end_time"),
    "time": ("time", "exam time", "times"),
    "building": ("building", "bldg"),
    "room": ("room",),
    "location": ("location", "room/location", "place"),
}


def _column(header: list[str], name: str) -> int | None:
    wanted = _HEADERS[name]
    for index, title in enumerate(header):
        if title.strip().lower() in wanted:
            return index
    return None


def parse_finals_csv(text: str) -> tuple[list[ExamRow], list[MappingProblem]]:
    reader = csv.reader(io.StringIO(text))
    rows = list(reader)
    if not rows:
        return [], [MappingProblem("file", "the CSV file is empty")]
    header = rows[0]
    columns = {name: _column(header, name) for name in _HEADERS}
    if columns["date"] is None or (columns["crn"] is None and columns["course"] is None):
        return [], [MappingProblem("line 1", "the header needs a date column and a crn or course column")]
    exams: list[ExamRow] = []
    problems: list[MappingProblem] = []

    def cell(row: list[str], name: str) -> str:
        index = columns[name]
        return row[index].strip() if index is not None and index < len(row) else ""

    for number, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        try:
            exams.append(_exam_from_cells(number, row, cell))
        except ValueError as exc:
            problems.append(MappingProblem(f"line {number}", str(exc)))
    return exams, problems


def _exam_from_cells(number: int, row: list[str], get: Callable[[list[str], str], str]) -> ExamRow:
    crn = get(row, "crn") or None
    course_match = COURSE_CODE.search(get(row, "course").upper())
    course = f"{course_match.group(1)} {course_match.group(2)}" if course_match else None
    if crn is not None and not crn.isdigit():
        raise ValueError(f"CRN {crn!r} is not a number")
    if crn is None and course is None:
        raise ValueError("no CRN and no course code")
    exam_date = parse_date(get(row, "date"))
    if exam_date is None:
        raise ValueError(f"date {get(row, 'date')!r} is not a date (use YYYY-MM-DD or MM/DD/YYYY)")
    start = end = None
    if get(row, "start"):
        start = parse_clock(get(row, "start"))
        end = parse_clock(get(row, "end")) if get(row, "end") else None
    elif get(row, "time"):
        times = parse_time_range(get(row, "time"))
        if times is None:
            raise ValueError(f"time {get(row, 'time')!r} is not a range such as 8:00 AM - 10:00 AM")
        start, end = times
    building, room = get(row, "building") or None, get(row, "room") or None
    if building is None and room is None and get(row, "location"):
        building, room = split_location(get(row, "location"))
    return ExamRow(number, crn, course, exam_date, start, end, building, room)


def parse_finals_text(text: str) -> tuple[list[ExamRow], list[MappingProblem]]:
    """The registrar's PDF as text: one exam per line, the fields in any order.

    A line is an exam when it has a course code or a CRN, a date and a time range; what follows
    the time range is the room. Headings, page numbers and footnotes have no date or no course
    and are skipped; a line with a course and a date but no readable time is reported.
    """
    exams: list[ExamRow] = []
    problems: list[MappingProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        course_match = COURSE_CODE.search(line)
        crn_match = CRN.search(line)
        exam_date = parse_date(line)
        if exam_date is None or (course_match is None and crn_match is None):
            continue
        times = TIME_RANGE.search(line)
        if times is None:
            problems.append(MappingProblem(f"line {number}", f"no time range in {line.strip()[:80]!r}"))
            continue
        try:
            start, end = parse_time_range(line) or (None, None)
        except ValueError as exc:
            problems.append(MappingProblem(f"line {number}", str(exc)))
            continue
        building, room = split_location(line[times.end() :].strip(" ,;|\t"))
        exams.append(
            ExamRow(
                line=number,
                crn=crn_match.group(1) if crn_match else None,
                course_code=f"{course_match.group(1)} {course_match.group(2)}" if course_match else None,
                exam_date=exam_date,
                start_minute=start,
                end_minute=end,
                building=building,
                room=room,
            )
        )
    return exams, problems


def parse_finals_file(path: Path) -> tuple[list[ExamRow], list[MappingProblem]]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() == ".csv":
        return parse_finals_csv(text)
    return parse_finals_text(text)


async def import_finals(
    session: AsyncSession, term_uid: str, rows: list[ExamRow], problems: list[MappingProblem], *, source_name: str
) -> FinalsReport:
    """Store one upload as a new completed schedule of the term. Refuses an upload with no exam."""
    term = await session.scalar(select(Term).where(Term.uid == term_uid))
    if term is None:
        raise ValueError(f"no term {term_uid!r}; `list_terms` or `campus-mcp import banner` first")
    if not rows:
        reasons = "; ".join(f"{p.item}: {p.reason}" for p in problems[:5]) or "no line had a course, a date and a time"
        raise ValueError(f"no exam could be read from {source_name}, so nothing was changed ({reasons})")
    known = set((await session.scalars(select(Section.crn).where(Section.term_id == term.id))).all())
    report = FinalsReport(problems=list(problems))
    schedule = FinalsSchedule(term_id=term.id, source_name=source_name, status="completed", loaded_at=utcnow())
    schedule.exams = [
        FinalExam(
            term_id=term.id,
            crn=row.crn,
            course_code=row.course_code,
            exam_date=row.exam_date,
            start_minute=row.start_minute,
            end_minute=row.end_minute,
            building=row.building,
            room=row.room,
        )
        for row in rows
    ]
    session.add(schedule)
    await session.flush()
    report.exams = len(rows)
    report.schedule_id = schedule.id
    report.unknown_crns = sorted({row.crn for row in rows if row.crn and row.crn not in known})
    return report
