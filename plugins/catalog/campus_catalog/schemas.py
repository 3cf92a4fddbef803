"""The catalog's arguments and answers, shared by the REST routes, the MCP tools and GraphQL.

Arguments (``*Query`` models) forbid unknown keys, so a misspelled filter is an error that names
it rather than a silently ignored one. Answers allow extra keys (seed 000, "Output schemas": a
new field must not break a client) and give every key that can be null a nullable type.
Times of day are ``"HH:MM"`` strings in the campus time zone; dates are ISO dates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Any, Literal

from campus_mcp import StudentText
from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, field_validator, model_validator
from pydantic_core import CoreSchema, PydanticCustomError, ValidationError, core_schema

from campus_catalog.queries.clock import hhmm, parse_days, parse_time_of_day

CRN_PATTERN = re.compile(r"^\d{4,6}$")
# "COMP 2350", "comp2350", "COMP-2350", "MATH 1750L"
COURSE_CODE_PATTERN = re.compile(r"^\s*([A-Za-z]{2,6})[\s\-_]*(\d{3,5}[A-Za-z]{0,2})\s*$")

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 25
MAX_SCHEDULE_CRNS = 20
# Far past the end of any list the catalog pages through (a term has a few thousand sections, a
# campus a few tens of thousands of reviews), and far inside the 64-bit OFFSET of the database:
# 2**63 reached PostgreSQL and SQLite and failed there (issue 9.7).
MAX_OFFSET = 100_000
MAX_SIMILAR = 50
# The academic calendar's dates: 9999-12-31 plus the default window of days overflowed Python's
# date type (a 500); no campus calendar reaches outside these.
FIRST_CALENDAR_DAY = date(1900, 1, 1)
LAST_CALENDAR_DAY = date(2199, 12, 31)

# Unknown is not none (issue 37, point 1): a field this campus never loaded holds these words, not
# null or an empty list, which a model reads as "none" ("the course has no prerequisites").
NotLoaded = Literal["not loaded here"]
NOT_LOADED: NotLoaded = "not loaded here"
_UNKNOWN = f"'{NOT_LOADED}': this campus has not loaded it; never say none, say it is not known here."


@dataclass(frozen=True)
class WholeNumber:
    """``Annotated[int, WholeNumber(low, high)]``: an integer argument from ``low`` to ``high``.

    The input schema advertises both ends (minimum, maximum), and a value past either end gets one
    error that names the whole range, so the caller learns what to send in one try.
    """

    low: int
    high: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_wrap_validator_function(
            self._check, core_schema.int_schema(ge=self.low, le=self.high)
        )

    def _check(self, value: Any, inner: core_schema.ValidatorFunctionWrapHandler) -> int:
        try:
            number: int = inner(value)
        except ValidationError as exc:
            if not any(e["type"] in ("greater_than_equal", "less_than_equal") for e in exc.errors()):
                raise  # not a number at all: pydantic's own words say so
            raise PydanticCustomError(
                "out_of_range",
                "Input should be a whole number from {low} to {high}",
                {"low": self.low, "high": self.high},
            ) from None
        return number


PageSize = Annotated[int, WholeNumber(1, MAX_PAGE_SIZE)]
Offset = Annotated[int, WholeNumber(0, MAX_OFFSET)]
SimilarCount = Annotated[int, WholeNumber(1, MAX_SIMILAR)]


class Answer(BaseModel):
    """Base of every answer: extra keys allowed, so adding a field never breaks a client."""

    model_config = ConfigDict(extra="allow")


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def normalize_crn(value: str) -> str:
    crn = value.strip()
    if not CRN_PATTERN.match(crn):
        raise ValueError(
            f"{value!r} is not a CRN. A CRN is the 5-digit course reference number of a section, "
            "for example '21345'; search_sections gives the CRN of each section."
        )
    return crn


def normalize_course_code(value: str) -> str:
    match = COURSE_CODE_PATTERN.match(value)
    if not match:
        raise ValueError(
            f"{value!r} is not a course code. Give the subject code and the course number, "
            "for example 'COMP 2350'; search_courses finds codes by title words."
        )
    return f"{match.group(1).upper()} {match.group(2).upper()}"


class Paging(Arguments):
    limit: PageSize = Field(default=DEFAULT_PAGE_SIZE, description=f"Page size, at most {MAX_PAGE_SIZE}.")
    offset: Offset = Field(default=0, description="Use next_offset of the last page.")


class Page(Answer):
    total: int = Field(description="How many match in all.")
    offset: int
    limit: int
    next_offset: int | None = Field(description="Pass as offset for the next page; null: the last page.")


# --- terms and subjects -----------------------------------------------------------------------


class TermRef(Answer):
    uid: str = Field(description="Pass it as `term`.")
    name: str


class PartOfTermOut(Answer):
    code: str
    name: str
    start_date: date | None
    end_date: date | None


class TermOut(TermRef):
    start_date: date
    end_date: date
    registration_opens_on: date | None
    registration_closes_on: date | None
    is_current: bool
    is_next: bool
    section_count: int = Field(description="0 for a future term whose sections are not listed yet.")
    parts_of_term: list[PartOfTermOut]


class TermsQuery(Arguments):
    pass


class TermList(Answer):
    current: TermRef | None = Field(description="The term in session today, or null between terms.")
    next: TermRef | None = Field(description="The first term that starts after today.")
    terms: list[TermOut] = Field(description="Newest first.")


class SubjectsQuery(Arguments):
    term: str | None = Field(
        default=None,
        description="Term uid or name. Without it, counts are over the current and future terms.",
    )


class SubjectOut(Answer):
    code: str
    name: str
    school: str | None
    section_count: int


class SubjectList(Answer):
    term: TermRef | None
    subjects: list[SubjectOut]


# --- sections ----------------------------------------------------------------------------------


class CampusOut(Answer):
    code: str
    name: str


class PersonRef(Answer):
    pub_id: str = Field(description="Pass it to get_instructor.")
    name: str


class InstructorRef(PersonRef):
    primary: bool


class MeetingOut(Answer):
    days: str = Field(description="M T W R F S U (R is Thursday); '' when none.")
    start: str | None = Field(description="HH:MM, campus time.")
    end: str | None
    start_12h: str | None = Field(default=None, description="The start on a 12-hour clock (1:30 PM).")
    end_12h: str | None = None
    start_date: date | None
    end_date: date | None
    building: str | None
    room: str | None
    meeting_type: str | None


class Seats(Answer):
    capacity: int | None
    enrolled: int | None
    available: int | None = Field(description="0 or less: full.")


class Waitlist(Answer):
    # Described where a section holds it (``waitlist``), once.
    capacity: int
    available: int | None


class AttributeOut(Answer):
    code: str
    description: str | None


class SectionOut(Answer):
    crn: str
    term: TermRef
    course_code: str
    title: str
    section_number: str
    schedule_type: str | None
    instructional_method: str | None
    campus: CampusOut | None
    part_of_term: PartOfTermOut | None
    credits_min: float | None
    credits_max: float | None
    seats: Seats
    waitlist: Waitlist | NotLoaded = Field(description=f"capacity 0: no waitlist. {_UNKNOWN}")
    cancelled: bool
    cross_listed_crns: list[str]
    linked_crns: list[str] = Field(description="Take these with this one (lecture and lab).")
    instructors: list[InstructorRef]
    meetings: list[MeetingOut]
    attributes: list[AttributeOut]


class MeetingSummary(Answer):
    days: str = Field(description="M T W R F S U (R is Thursday); '' when none.")
    start: str | None = Field(description="12-hour, campus time.")
    end: str | None


class SectionSummary(Answer):
    """A section as a search lists it: the few fields a student's question needs; get_section has the rest.

    The read path (queries/sections.py) selects exactly these fields.
    """

    crn: str
    course_code: str
    title: str
    section_number: str
    schedule_type: str | None
    meetings: list[MeetingSummary]
    instructors: list[str] = Field(description="Names, the primary instructor first.")
    open_seats: int | None = Field(description="0 or less: full.")
    capacity: int | None
    campus: str | None = Field(description="The campus, or 'Online'.")
    cancelled: bool


class SectionSearch(Paging):
    term: str | None = Field(
        default=None,
        description="Term uid ('202710') or name ('Spring 2027'). Default: the current term, else the next.",
    )
    subject: str | None = Field(
        default=None, max_length=200, description="Subject code or name, such as 'COMP' or 'Computer Science'."
    )
    course_number: str | None = Field(default=None, description="Course number, such as '2350'.")
    q: str | None = Field(
        default=None,
        max_length=200,
        description="Title words ('intro programming'), or with semantic=true a description of the topic.",
    )
    semantic: bool = Field(default=False, description="Search q by meaning instead of by words.")
    instructor: str | None = Field(default=None, description="Part of an instructor's name, or a pub_id.")
    days: str | None = Field(
        default=None,
        description="Only sections that meet on these days and no others, e.g. 'TR' or 'MWF' (R = Thursday).",
    )
    free_days: str | None = Field(default=None, description="Days that must stay free, e.g. 'F' for no Friday class.")
    begins_after: str | None = Field(default=None, description="Every meeting starts at or after this time ('10:00').")
    ends_before: str | None = Field(default=None, description="Every meeting ends at or before this time ('15:00').")
    campus: str | None = Field(default=None, description="Campus code or name.")
    part_of_term: str | None = Field(default=None, description="Part-of-term code, such as '1' for the full term.")
    schedule_type: str | None = Field(default=None, description="'Lecture', 'Laboratory', ...")
    instructional_method: str | None = Field(default=None, description="'In-Person', 'Online', 'Hybrid', ...")
    open_only: bool = Field(default=False, description="Only sections with open seats.")
    credits: float | None = Field(default=None, ge=0, le=30, description="Only sections worth this many credits.")
    attribute: str | None = Field(
        default=None,
        max_length=200,
        description="Section attribute code or name, such as 'HSS' or 'Humanities and Social Sciences'.",
    )
    include_cancelled: bool = Field(default=False, description="Also list cancelled sections.")

    @field_validator("days", "free_days")
    @classmethod
    def _days(cls, value: str | None) -> str | None:
        return None if value is None else parse_days(value)

    @field_validator("begins_after", "ends_before")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        return None if value is None else hhmm(parse_time_of_day(value))

    @model_validator(mode="after")
    def _check(self) -> SectionSearch:
        if self.begins_after and self.ends_before and self.ends_before <= self.begins_after:
            raise ValueError(
                f"ends_before ({self.ends_before}) must be later than begins_after ({self.begins_after}); "
                "swap them or drop one."
            )
        if self.semantic and not self.q:
            raise ValueError("semantic=true needs q: describe the topic in words, e.g. 'the stock market'.")
        if self.days and self.free_days and set(self.days) & set(self.free_days):
            raise ValueError(
                "days and free_days name the same day; a section cannot meet on a day that must stay free."
            )
        return self


# What ``total`` counts for a search by meaning (semantic.RELEVANCE_FLOOR says why the two differ).
MEANING_MATCHES = "How many match in all; by meaning, those close enough to q to be about it (at most 200)."
MEANING_RANKED = "How many match in all; by meaning, every one ranked, best first (at most 200)."


# A search by meaning that is not sure says why (queries.meaning_notes).
MEANING_NOTE = "By meaning: why the page is what it is when no match is close (null when one is). Tell the student."


class SectionPage(Page):
    total: int = Field(description=MEANING_MATCHES)
    term: TermRef
    sections: list[SectionSummary]
    note: str | None = Field(default=None, description=MEANING_NOTE)


class SectionLookup(Arguments):
    crn: str = Field(description="The 5-digit CRN.")
    term: str | None = Field(default=None, description="Term uid or name. Default: the newest term that has this CRN.")

    @field_validator("crn")
    @classmethod
    def _crn(cls, value: str) -> str:
        return normalize_crn(value)


class FinalExamOut(Answer):
    date: date
    start: str | None
    end: str | None
    building: str | None
    room: str | None


class SectionBrief(Answer):
    crn: str
    course_code: str
    title: str
    section_number: str
    schedule_type: str | None
    cancelled: bool


class SectionDetail(SectionOut):
    cross_listed: list[SectionBrief]
    linked: list[SectionBrief]
    final_exam: FinalExamOut | None
    seats_as_of: str = Field(description="When the seats were read and whether they are refreshed: say it.")


class SimilarSectionsQuery(SectionLookup):
    limit: SimilarCount = Field(default=10, description=f"How many, at most {MAX_SIMILAR}.")


class SimilarSection(SectionSummary):
    score: float = Field(description="Closeness, higher is closer.")
    same_course: bool = Field(description="Another open section of the same course (listed first).")


class SimilarSections(Answer):
    term: TermRef
    section: SectionBrief
    method: Literal["meaning", "words"] = Field(description="How closeness was measured.")
    sections: list[SimilarSection]


# --- schedule check ----------------------------------------------------------------------------


class ScheduleCheckQuery(Arguments):
    crns: list[str] = Field(min_length=1, max_length=MAX_SCHEDULE_CRNS, description="The CRNs of the plan.")
    term: str | None = Field(default=None, description="Term uid or name. Default: the current term, else the next.")

    @field_validator("crns", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part for part in re.split(r"[\s,;]+", value) if part]
        return value

    @field_validator("crns")
    @classmethod
    def _crns(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(normalize_crn(crn) for crn in value))


class ConflictSide(Answer):
    crn: str
    course_code: str
    schedule_type: str | None
    start: str
    end: str


class Conflict(Answer):
    first: ConflictSide
    second: ConflictSide
    days: str = Field(description="The days both meet.")
    overlap_start: str
    overlap_end: str
    overlap_12h: str = Field(default="", description="The overlap on a 12-hour clock (10:30 AM-10:50 AM).")
    overlap_minutes: int = Field(description="On each of those days.")
    override: str = Field(description="The override it needs.")


class LabPair(Answer):
    crn: str
    course_code: str
    schedule_type: str | None
    paired_crns: list[str] = Field(description="Its linked sections that are in the plan.")
    missing: bool = Field(description="The plan has none of the sections it must be taken with.")
    options: list[str] = Field(description="CRNs that would complete the pair.")


class DuplicateCourse(Answer):
    course_code: str
    crns: list[str]


class OverrideNeed(Answer):
    override: str
    crns: list[str]
    reason: str


class ScheduleTotals(Answer):
    credits: float
    hours_per_week: float
    days_on_campus: str
    days_on_campus_count: int


PrerequisiteStatus = Literal["met", "in_progress", "not_on_record", "unknown", "none"]


class PrerequisiteCheck(Answer):
    """One planned course's prerequisites against the signed-in student's record (issue 37, point 7)."""

    course_code: str
    status: PrerequisiteStatus = Field(
        description=(
            "met: every prerequisite is a course of a term the student finished here; in_progress: met once the "
            "courses they take now are passed; not_on_record: a prerequisite is not in their record here (transfer, "
            "AP or test credit is not recorded: ask the student); unknown: the student's history or the course's "
            "prerequisites are not loaded here, or it needs a test score; none: the course has no prerequisites."
        )
    )
    not_on_record: list[str] = Field(description="Prerequisite courses not in the student's record here.")
    note: str


class ScheduleCheck(Answer):
    term: TermRef
    sections: list[SectionOut]
    unknown_crns: list[str] = Field(description="CRNs that are not in this term.")
    cancelled_crns: list[str]
    conflicts: list[Conflict]
    lab_pairs: list[LabPair]
    duplicates: list[DuplicateCourse]
    overrides_needed: list[OverrideNeed]
    totals: ScheduleTotals
    ask_for_overrides: str = Field(description="Who gives overrides.")
    held_crns: list[str] | None = Field(
        default=None,
        description=(
            "CRNs of the plan already on the signed-in student's schedule in this term: they hold the seat, so "
            "a full one needs no override. null: no student signed in, so the check does not know their schedule."
        ),
    )
    prerequisites: list[PrerequisiteCheck] | None = Field(
        default=None,
        description=(
            "Each planned course's prerequisites against the signed-in student's record; null: no student "
            "signed in (get_course gives the prerequisites)."
        ),
    )


# --- courses ---------------------------------------------------------------------------------


class CourseSearch(Paging):
    q: str | None = Field(default=None, max_length=200, description="A course code or title words.")
    subject: str | None = Field(
        default=None, max_length=200, description="Subject code or name, such as 'COMP' or 'Computer Science'."
    )
    semantic: bool = Field(default=False, description="Search q by meaning instead of by words.")

    @model_validator(mode="after")
    def _check(self) -> CourseSearch:
        if self.semantic and not self.q:
            raise ValueError("semantic=true needs q: describe the topic in words.")
        return self


class CourseBrief(Answer):
    code: str
    title: str
    credits_min: float | None
    credits_max: float | None
    description: str | NotLoaded | None = Field(description=f"The start of the description. {_UNKNOWN}")
    terms_offered: list[str]


class CoursePage(Page):
    total: int = Field(description=MEANING_MATCHES)
    courses: list[CourseBrief]
    note: str | None = Field(default=None, description=MEANING_NOTE)


class CourseLookup(Arguments):
    code: str = Field(description="Course code, such as 'COMP 2350'.")

    @field_validator("code")
    @classmethod
    def _code(cls, value: str) -> str:
        return normalize_course_code(value)


class Requirement(Answer):
    """A node of a prerequisite tree: a group (op and items) or a leaf (course or test)."""

    op: Literal["and", "or"] | None = None
    items: list[Requirement] | None = None
    course: str | None = None
    title: str | None = None
    test: str | None = None
    min_grade: str | None = None
    min_score: str | None = None
    concurrent: bool | None = None


class Restriction(Answer):
    kind: str
    type: str
    values: list[str]


class Fee(Answer):
    description: str
    amount: float | None


class CourseLink(Answer):
    code: str
    title: str


class TermOffering(Answer):
    term: TermRef
    section_count: int


class CourseDetail(Answer):
    code: str
    subject_code: str
    course_number: str
    title: str
    # Each of the course details' fields is its value (null or []: none) or NOT_LOADED.
    description: str | NotLoaded | None
    credits_min: float | None
    credits_max: float | None
    school: str | None
    prerequisites: Requirement | NotLoaded | None = Field(description=f"null: none. {_UNKNOWN}")
    corequisites: list[str] | NotLoaded
    restrictions: list[Restriction] | NotLoaded
    mutual_exclusions: list[str] | NotLoaded
    catalog_entry: str | NotLoaded | None
    fees: list[Fee] | NotLoaded
    learning_objectives: list[str] | NotLoaded
    terms_offered: list[str]
    unlocks: list[CourseLink] = Field(description="Courses that list this one as a prerequisite.")
    offered_in: list[TermOffering] = Field(description="Current and future terms with sections of it.")
    not_loaded: str | None = Field(default=None, description="What is not known here and where to ask: say it.")


# --- programs and electives ------------------------------------------------------------------


class ProgramsQuery(Arguments):
    catalog_year: str | None = Field(default=None, description="Such as '2026-2027'. Default: the newest.")


class ProgramBrief(Answer):
    slug: str
    name: str
    school: str | None
    degree: str | None


class ProgramList(Answer):
    catalog_year: str | None
    catalog_years: list[str]
    programs: list[ProgramBrief]
    note: str | None = Field(default=None, description="Why the list is empty and where to ask: say it.")


class ProgramLookup(Arguments):
    slug: str = Field(description="The program slug from list_programs.")
    catalog_year: str | None = Field(default=None, description="Default: the newest catalog year.")


class PlannedCourse(Answer):
    code: str | None = Field(description="null for an elective slot.")
    title: str
    credits: float | None


class PlanSemester(Answer):
    label: str
    courses: list[PlannedCourse]


class PlanOfStudy(Answer):
    name: str
    semesters: list[PlanSemester]


class ElectiveList(Answer):
    name: str
    courses: list[str]
    notes: str | None


class ProgramDetail(ProgramBrief):
    catalog_year: str
    url: str | None
    total_credits: float | None
    plans_of_study: list[PlanOfStudy]
    elective_lists: list[ElectiveList]


class TermElectivesQuery(Arguments):
    term: str | None = Field(default=None, description="Term uid or name. Default: the current term, else the next.")
    school: str | None = Field(default=None, description="Only this school's lists (part of its name).")
    # Issue 38: by default the lists and their courses; the rest on request.
    include_full_text: bool = Field(default=False, description="Also the full text of each list (its PDF).")
    include_crns: bool = Field(default=False, description="Also the CRNs of each course's sections in the term.")


class ElectiveHeading(Answer):
    code: str | None
    title: str
    crns: list[str] | None = Field(description="With include_crns only.")


class TermElectiveListOut(Answer):
    school: str
    title: str
    url: str
    fetched_at: datetime | None = Field(description="Campus time.")
    fetched_at_text: str | None = None
    course_headings: list[ElectiveHeading]
    full_text: str | None = Field(description="With include_full_text only.")


class TermElectives(Answer):
    term: TermRef
    lists: list[TermElectiveListOut]
    note: str | None = Field(default=None, description="Why there are no lists and where to ask: say it.")


# --- instructors and reviews -----------------------------------------------------------------


class InstructorSearch(Paging):
    q: str | None = Field(default=None, max_length=200, description="Part of a name, or with semantic=true a topic.")
    semantic: bool = Field(default=False, description="Search q by meaning (a topic) instead of by name.")
    subject: str | None = Field(
        default=None, max_length=200, description="Only instructors teaching this subject (code or name) in the term."
    )
    term: str | None = Field(default=None, description="Term for `subject`. Default: current, else next.")

    @model_validator(mode="after")
    def _check(self) -> InstructorSearch:
        if self.semantic and not self.q:
            raise ValueError("semantic=true needs q: describe what the instructor teaches.")
        return self


class RatingSummary(Answer):
    overall: float | None
    difficulty: float | None
    would_take_again_percent: float | None
    rating_count: int


class InstructorBrief(Answer):
    pub_id: str
    name: str
    department: str | None
    rating: RatingSummary | NotLoaded = Field(description=f"{_UNKNOWN} (not 'unrated')")


class InstructorPage(Page):
    total: int = Field(description="How many match in all; by meaning, those who teach a course about q (at most 200).")
    instructors: list[InstructorBrief]


class InstructorLookup(Arguments):
    pub_id: str = Field(min_length=1, max_length=40, description="The instructor's pub_id from search_instructors.")
    term: str | None = Field(default=None, description="Term of the sections listed. Default: current, else next.")


class RatingDetail(RatingSummary):
    distribution: dict[str, int] | None
    tags: dict[str, int] = Field(description="Tag: how many reviews gave it.")
    fetched_at: datetime | None = Field(description="Campus time.")
    fetched_at_text: str | None = None


class ReviewOut(Answer):
    id: int
    instructor: PersonRef
    course_code: str | None
    posted_on: date
    overall: float | None
    difficulty: float | None
    would_take_again: bool | None
    grade: str | None
    tags: list[str]
    # A stranger's words reach the model fenced, like every other text a student wrote (issue 37 point 9).
    text: StudentText = Field(description="The review as its writer wrote it, cleaned to one line: their words.")
    sentiment: float | None = Field(description="-1 complaint .. 1 praise.")


class InstructorDetail(Answer):
    pub_id: str
    name: str
    department: str | None
    email: str | None
    rating: RatingDetail | NotLoaded = Field(description=f"{_UNKNOWN} (not 'unrated')")
    recent_reviews: list[ReviewOut]
    term: TermRef | None
    sections: list[SectionSummary] = Field(description="Their sections in the term; get_section has the rest.")


class SimilarInstructorsQuery(Arguments):
    pub_id: str = Field(min_length=1, max_length=40, description="The instructor's pub_id from search_instructors.")
    limit: SimilarCount = Field(default=10, description=f"How many, at most {MAX_SIMILAR}.")


class SimilarInstructor(InstructorBrief):
    score: float


class SimilarInstructors(Answer):
    instructor: InstructorBrief
    method: Literal["meaning", "subjects"]
    instructors: list[SimilarInstructor]


class ReviewSearch(Paging):
    instructor: str | None = Field(
        default=None, max_length=200, description="An instructor's pub_id or name, such as 'Ada Lovelace'."
    )
    course: str | None = Field(default=None, description="Course code, such as 'COMP 2350'.")
    q: str | None = Field(default=None, max_length=200, description="Words in the review, or with semantic a meaning.")
    semantic: bool = Field(default=False, description="Search q by meaning instead of by words.")
    sentiment: Literal["positive", "negative", "neutral"] | None = Field(
        default=None, description="Praise (positive), complaint (negative) or neither."
    )

    @field_validator("course")
    @classmethod
    def _course(cls, value: str | None) -> str | None:
        return None if value is None else normalize_course_code(value)

    @model_validator(mode="after")
    def _check(self) -> ReviewSearch:
        if self.semantic and not self.q:
            raise ValueError("semantic=true needs q: say what the reviews should be about.")
        return self


class ReviewPage(Page):
    total: int = Field(description=MEANING_RANKED)
    reviews: list[ReviewOut]


# --- academic calendar -----------------------------------------------------------------------


class EventsQuery(Paging):
    start_date: date | None = Field(
        default=None, ge=FIRST_CALENDAR_DAY, le=LAST_CALENDAR_DAY, description="Default: today."
    )
    end_date: date | None = Field(
        default=None, ge=FIRST_CALENDAR_DAY, le=LAST_CALENDAR_DAY, description="Default: 180 days after start_date."
    )
    category: str | None = Field(default=None, description="'holiday', 'deadline', 'finals', 'term', ...")
    q: str | None = Field(default=None, max_length=200, description="Words in the title.")

    @model_validator(mode="after")
    def _check(self) -> EventsQuery:
        if self.start_date and self.end_date and self.end_date < self.start_date:
            raise ValueError(f"end_date ({self.end_date}) is before start_date ({self.start_date}); swap them.")
        return self


class EventOut(Answer):
    title: str
    start_date: date
    start_weekday: str = Field(default="", description="The weekday of start_date (Monday).")
    end_date: date
    end_weekday: str = ""
    all_day: bool
    starts_at: datetime | None = Field(description="Campus time.")
    ends_at: datetime | None
    starts_at_text: str | None = Field(default=None, description="Weekday, date and 12-hour time, campus time.")
    category: str | None
    description: str | None
    location: str | None


class EventPage(Page):
    start_date: date
    end_date: date
    events: list[EventOut]
    note: str | None = Field(default=None, description="With no events: the dates the calendar covers. Say it.")
