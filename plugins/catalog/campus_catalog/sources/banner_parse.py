"""Banner 9 ``searchResults`` JSON into plain dataclasses, losing no section.

Real Banner data is messy in ways that differ between campuses (see ``../shared/fixtures``):
times as ``"0820"`` strings, meetings with no times at all (research, independent study,
online), sections with no instructor, HTML entities in titles (``&amp;``), negative
``seatsAvailable`` (over-enrolled), ``maximumEnrollment`` 0, rooms called ``ONLINE`` or
``INTERNET``. The rule: **every section that has a CRN is kept**. A field that cannot be read is
left empty and the problem is recorded with the CRN and the reason, so the run says what it
could not map instead of dropping the section. Only an item with no CRN at all cannot be stored;
it is recorded with Banner's own id.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

# Banner's day booleans, Monday first; the index is the ISO weekday minus one.
WEEKDAY_FIELDS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Rooms and buildings that mean "no room": the class meets online.
ONLINE_PLACES = frozenset({"ONLINE", "INTERNET", "WEB", "VIRTUAL", "REMOTE", "ONLN", "OL"})


@dataclass(frozen=True)
class BannerInstructor:
    name: str
    email: str | None
    banner_id: str | None
    primary: bool


@dataclass(frozen=True)
class BannerMeeting:
    meeting_type: str  # LEC, LAB, RES, INS, ... (Banner's code; kept as given)
    meeting_type_description: str | None
    weekdays: tuple[int, ...]  # 0 = Monday ... 6 = Sunday
    start_time: time | None
    end_time: time | None
    start_date: date | None
    end_date: date | None
    building: str | None
    building_description: str | None
    room: str | None
    campus: str | None
    campus_code: str | None
    online: bool
    hours_per_week: float | None


@dataclass(frozen=True)
class BannerSection:
    term: str
    term_description: str | None
    crn: str
    subject: str
    subject_description: str | None
    course_number: str
    sequence: str
    title: str
    schedule_type: str | None
    campus: str | None
    part_of_term: str | None
    instructional_method: str | None
    credits_min: float | None
    credits_max: float | None
    max_enrollment: int | None
    enrollment: int | None
    seats_available: int | None  # may be negative: Banner's count when a section is over-enrolled
    wait_capacity: int | None
    wait_count: int | None
    wait_available: int | None
    open: bool | None
    link_identifier: str | None
    linked: bool
    cross_list: str | None
    cross_list_capacity: int | None
    cross_list_count: int | None
    cross_list_available: int | None
    instructors: tuple[BannerInstructor, ...]
    meetings: tuple[BannerMeeting, ...]
    attributes: tuple[tuple[str, str], ...]

    @property
    def course_code(self) -> str:
        return f"{self.subject} {self.course_number}"

    @property
    def online(self) -> bool:
        return bool(self.meetings) and all(m.online for m in self.meetings)


@dataclass(frozen=True)
class MappingProblem:
    """Something that could not be mapped. ``item`` is the CRN, or Banner's id when there is none.

    ``stored``: the row was stored with a gap (no times, no credits); else it was refused, and
    ``kind`` says why in a few words, so a run counts its refused rows by kind."""

    item: str
    reason: str
    stored: bool = False
    kind: str = ""


# Banner's term codes: the year and the term's two digits ('202610').
TERM_CODE = re.compile(r"\d{6}")


@dataclass
class ParsedPage:
    sections: list[BannerSection] = field(default_factory=list)
    problems: list[MappingProblem] = field(default_factory=list)
    total_count: int | None = None
    # Items that could not be stored at all (no CRN): counted so a run can say it lost them.
    unstorable: int = 0


def text(value: Any) -> str | None:
    """A display string: HTML entities decoded, whitespace trimmed, empty as None."""
    if value is None:
        return None
    decoded = html.unescape(str(value)).strip()
    return decoded or None


def parse_clock(value: Any) -> time:
    """Banner's ``"0820"`` (or ``"820"``) as a time. Raises ValueError for anything else."""
    raw = str(value).strip()
    if not raw.isdigit() or len(raw) not in (3, 4):
        raise ValueError(f"time {value!r} is not HHMM")
    raw = raw.zfill(4)
    return time(int(raw[:2]), int(raw[2:]))


def parse_us_date(value: Any) -> date:
    return datetime.strptime(str(value).strip(), "%m/%d/%Y").date()


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ValueError(f"{value!r} is not a whole number")


def _float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return float(str(value))


def subject_name(subject: str, description: str | None) -> str | None:
    """The subject's name without its code in front, as campuses write it: TAMU's ``"CSCE -
    Computer Sci &amp; Engr"`` gives ``"Computer Sci & Engr"``, TRU's ``"COMP-Computing"`` and
    ``"LING &ndash; Linguistics"`` give ``"Computing"`` and ``"Linguistics"`` (entities decoded by
    :func:`text` first). Banner's prerequisite pages name subjects this way, and a search by meaning
    reads the name beside each course's title."""
    if description is None:
        return None
    found = re.match(rf"{re.escape(subject)}\s*[-\u2013\u2014:]\s*(.+)", description)
    return found.group(1).strip() if found else description


def _credits(raw: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """Credits: fixed (``creditHours`` or ``creditHourLow`` alone) or a range (``TO``/``OR`` ``High``)."""
    fixed = _float(raw.get("creditHours"))
    low = _float(raw.get("creditHourLow"))
    high = _float(raw.get("creditHourHigh"))
    if high is not None and low is not None and raw.get("creditHourIndicator") in ("TO", "OR"):
        return low, high
    value = fixed if fixed is not None else low if low is not None else high
    return value, value


def _is_online(*places: str | None) -> bool:
    return any(place is not None and place.upper() in ONLINE_PLACES for place in places)


def parse_meeting(raw: Mapping[str, Any], crn: str, index: int, problems: list[MappingProblem]) -> BannerMeeting:
    """One ``meetingsFaculty[].meetingTime``. Unreadable fields become None, with a problem recorded."""
    label = f"meeting {index + 1}"
    start_time = end_time = None
    if raw.get("beginTime") is not None or raw.get("endTime") is not None:
        try:
            start_time = parse_clock(raw.get("beginTime"))
            end_time = parse_clock(raw.get("endTime"))
        except ValueError as exc:
            start_time = end_time = None
            problems.append(MappingProblem(crn, f"{label}: {exc}; stored without times", stored=True))
    start_date = end_date = None
    try:
        start_date = parse_us_date(raw["startDate"]) if raw.get("startDate") else None
        end_date = parse_us_date(raw["endDate"]) if raw.get("endDate") else None
    except ValueError:
        problems.append(
            MappingProblem(
                crn,
                f"{label}: dates {raw.get('startDate')!r}-{raw.get('endDate')!r} are not MM/DD/YYYY; "
                "stored without dates",
                stored=True,
            )
        )
        start_date = end_date = None
    building = text(raw.get("building"))
    room = text(raw.get("room"))
    online = _is_online(building, room)
    try:
        hours = _float(raw.get("hoursWeek"))
    except ValueError:
        hours = None
    return BannerMeeting(
        meeting_type=text(raw.get("meetingType")) or "CLAS",
        meeting_type_description=text(raw.get("meetingTypeDescription")),
        weekdays=tuple(i for i, day in enumerate(WEEKDAY_FIELDS) if raw.get(day) is True),
        start_time=start_time,
        end_time=end_time,
        start_date=start_date,
        end_date=end_date,
        building=None if online else building,
        building_description=None if online else text(raw.get("buildingDescription")),
        room=None if online else room,
        campus=text(raw.get("campusDescription")) or text(raw.get("campus")),
        campus_code=text(raw.get("campus")),
        online=online,
        hours_per_week=hours,
    )


def parse_instructors(raw: Any, crn: str, problems: list[MappingProblem]) -> tuple[BannerInstructor, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(MappingProblem(crn, "faculty is not a list; stored without instructors", stored=True))
        return ()
    found: list[BannerInstructor] = []
    for person in raw:
        name = text(person.get("displayName")) if isinstance(person, dict) else None
        if name is None:
            problems.append(MappingProblem(crn, "an instructor has no displayName; left out", stored=True))
            continue
        found.append(
            BannerInstructor(
                name=name,
                email=text(person.get("emailAddress")),
                banner_id=text(person.get("bannerId")),
                primary=person.get("primaryIndicator") is True,
            )
        )
    # The primary instructor first, so "the instructor" of a section is the first one.
    return tuple(sorted(found, key=lambda p: not p.primary))


def parse_section(
    raw: Mapping[str, Any], problems: list[MappingProblem], *, where: str = "item"
) -> BannerSection | None:
    """One section, or None when it cannot be stored: no CRN (then a problem names Banner's id,
    or ``where`` the item is), or a term that is not a Banner term code."""
    crn = text(raw.get("courseReferenceNumber"))
    if crn is None:
        item = f"id {raw['id']}" if raw.get("id") is not None else where
        problems.append(MappingProblem(item, "no courseReferenceNumber; cannot be stored", kind="no CRN"))
        return None
    term = text(raw.get("term")) or ""
    if term and not TERM_CODE.fullmatch(term):
        # A made-up term would become a term of the catalog ('abc'), listed to every student.
        problems.append(
            MappingProblem(
                crn,
                f"term {term[:40]!r} is not a Banner term code (six digits, such as 202610); cannot be stored",
                kind="not a term code",
            )
        )
        return None
    subject = text(raw.get("subject")) or ""
    course_number = text(raw.get("courseNumber")) or ""
    if not subject or not course_number:
        problems.append(MappingProblem(crn, "no subject or course number; stored as given", stored=True))

    def whole(name: str) -> int | None:
        try:
            return _int(raw.get(name))
        except ValueError as exc:
            problems.append(MappingProblem(crn, f"{name}: {exc}; stored without it", stored=True))
            return None

    try:
        credits_min, credits_max = _credits(raw)
    except ValueError:
        problems.append(MappingProblem(crn, "credit hours are not numbers; stored without credits", stored=True))
        credits_min = credits_max = None

    meetings_raw = raw.get("meetingsFaculty") or []
    meetings: list[BannerMeeting] = []
    if not isinstance(meetings_raw, list):
        problems.append(MappingProblem(crn, "meetingsFaculty is not a list; stored without meetings", stored=True))
        meetings_raw = []
    for index, entry in enumerate(meetings_raw):
        meeting_time = entry.get("meetingTime") if isinstance(entry, dict) else None
        if not isinstance(meeting_time, dict):
            problems.append(MappingProblem(crn, f"meeting {index + 1} has no meetingTime; left out", stored=True))
            continue
        meetings.append(parse_meeting(meeting_time, crn, index, problems))

    attributes: list[tuple[str, str]] = []
    for attribute in raw.get("sectionAttributes") or []:
        if isinstance(attribute, dict) and attribute.get("code"):
            attributes.append((str(attribute["code"]), text(attribute.get("description")) or ""))

    subject_description = text(raw.get("subjectDescription"))
    return BannerSection(
        term=term,
        term_description=text(raw.get("termDesc")),
        crn=crn,
        subject=subject,
        subject_description=subject_name(subject, subject_description),
        course_number=course_number,
        sequence=text(raw.get("sequenceNumber")) or "",
        title=text(raw.get("courseTitle")) or f"{subject} {course_number}".strip(),
        schedule_type=text(raw.get("scheduleTypeDescription")),
        campus=text(raw.get("campusDescription")),
        part_of_term=text(raw.get("partOfTerm")),
        instructional_method=text(raw.get("instructionalMethod")),
        credits_min=credits_min,
        credits_max=credits_max,
        max_enrollment=whole("maximumEnrollment"),
        enrollment=whole("enrollment"),
        seats_available=whole("seatsAvailable"),
        wait_capacity=whole("waitCapacity"),
        wait_count=whole("waitCount"),
        wait_available=whole("waitAvailable"),
        open=raw.get("openSection") if isinstance(raw.get("openSection"), bool) else None,
        link_identifier=text(raw.get("linkIdentifier")),
        linked=raw.get("isSectionLinked") is True,
        cross_list=text(raw.get("crossList")),
        cross_list_capacity=whole("crossListCapacity"),
        cross_list_count=whole("crossListCount"),
        cross_list_available=whole("crossListAvailable"),
        instructors=parse_instructors(raw.get("faculty"), crn, problems),
        meetings=tuple(meetings),
        attributes=tuple(attributes),
    )


def parse_search_results(page: Mapping[str, Any], *, source: str = "page") -> ParsedPage:
    """A whole ``searchResults`` response. Raises ValueError when it is not one at all."""
    data = page.get("data")
    if data is None and page.get("success") is False:
        # Banner's answer to a search in a session with no term selected: no sections, not an error.
        data = []
    if not isinstance(data, list):
        raise ValueError(f"{source}: 'data' is not a list of sections")
    parsed = ParsedPage(total_count=page.get("totalCount") if isinstance(page.get("totalCount"), int) else None)
    for number, raw in enumerate(data, start=1):
        where = f"{source} item {number}"
        if not isinstance(raw, dict):
            parsed.problems.append(MappingProblem(where, "not a JSON object; cannot be stored", kind="not an object"))
            parsed.unstorable += 1
            continue
        section = parse_section(raw, parsed.problems, where=where)
        if section is None:
            parsed.unstorable += 1
        else:
            parsed.sections.append(section)
    return parsed
