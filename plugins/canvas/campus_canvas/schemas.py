"""The Canvas family's arguments and answers, shared by the MCP tools and their REST twins.

Arguments forbid unknown keys (a misspelled argument is named, not ignored). Every time comes twice,
in campus time: ISO 8601 with the campus's offset and the words a student reads
(``Friday, September 12, 11:59 PM``). Text written in Canvas comes fenced (``CanvasText``).
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from campus_canvas.text import CanvasText

# What a student's work stands at, from Canvas's submission flags (the planner's and the submission's).
WorkState = Literal["submitted", "graded", "late", "missing", "excused", "not_submitted", "nothing_to_submit"]
STATE_WORDS = "late: handed in after the due time; missing: past due, not handed in (Canvas says so)."
MAX_WINDOW_DAYS = 60
FIRST_DAY = date(2000, 1, 1)
LAST_DAY = date(2099, 12, 31)


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DueWorkQuery(Arguments):
    # Bounded: a day Canvas could have work on (year 1 or 9999 would overflow the campus-time window).
    start_date: date | None = Field(
        default=None, ge=FIRST_DAY, le=LAST_DAY, description="First day, YYYY-MM-DD, campus time. Default: today."
    )
    end_date: date | None = Field(
        default=None,
        ge=FIRST_DAY,
        le=LAST_DAY,
        description=f"Last day (included), YYYY-MM-DD. Default: 6 days after start_date; at most {MAX_WINDOW_DAYS} days after it.",
    )
    include_done: bool = Field(default=True, description="false: only work not handed in yet (not submitted, missing).")
    limit: int = Field(default=50, ge=1, le=100, description="At most this many items, soonest first.")

    @model_validator(mode="after")
    def _window(self) -> DueWorkQuery:
        if self.start_date and self.end_date:
            if self.end_date < self.start_date:
                raise ValueError("end_date is before start_date: give the first day, then the last day")
            if (self.end_date - self.start_date).days > MAX_WINDOW_DAYS:
                raise ValueError(f"the window is longer than {MAX_WINDOW_DAYS} days: ask for a shorter one")
        return self


class MissingWorkQuery(Arguments):
    limit: int = Field(default=50, ge=1, le=100, description="At most this many items, the most overdue first.")


class CourseAssignmentsQuery(Arguments):
    course: str = Field(
        min_length=1,
        max_length=120,
        description="The course: its Canvas id, its code (MATH 1750) or words of its name (calculus).",
    )
    which: Literal["upcoming", "past", "overdue", "undated", "all"] = Field(
        default="all", description="upcoming (due later), past, overdue (past due, not handed in), undated, or all."
    )
    limit: int = Field(default=50, ge=1, le=100, description="At most this many assignments, by due date.")


class GradesQuery(Arguments):
    course: str | None = Field(
        default=None,
        max_length=120,
        description="Only this course: its Canvas id, its code (MATH 1750) or words of its name. Default: every current course.",
    )


class AnnouncementsQuery(Arguments):
    days: int = Field(default=14, ge=1, le=60, description="Announcements of the last this many days.")
    course: str | None = Field(
        default=None,
        max_length=120,
        description="Only this course (id, code or words of its name). Default: every current course.",
    )
    limit: int = Field(default=20, ge=1, le=50, description="At most this many, newest first.")


# --- answers ---------------------------------------------------------------------------------


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class CourseRef(Answer):
    id: str
    name: str
    code: str | None = Field(default=None, description="Such as MATH 1750.")


class WorkItem(Answer):
    course: CourseRef | None
    title: CanvasText
    kind: str = Field(description="assignment, quiz, discussion_topic, wiki_page, planner_note or peer_review.")
    due_at: str | None = Field(description="Campus time, ISO 8601; null: no due time.")
    due_text: str | None = Field(description="The same in words: Friday, September 12, 11:59 PM.")
    state: WorkState = Field(description=STATE_WORDS)
    points_possible: float | None = None
    url: str | None = Field(description="Its Canvas page.")


class DueWork(Answer):
    start_date: date
    end_date: date
    timezone: str
    count: int
    items: list[WorkItem]
    more: bool = Field(description="More than the limit: ask for a shorter window.")


class MissingWork(Answer):
    timezone: str
    count: int
    items: list[WorkItem]
    more: bool


class Assignment(WorkItem):
    description: CanvasText | None = Field(description="The instructions, cut to 600 characters.")
    score: float | None = Field(description="When graded and released.")
    grade: str | None = Field(description="As Canvas shows it (a letter, points, complete).")
    submitted_at: str | None = None


class CourseAssignments(Answer):
    course: CourseRef
    which: str
    timezone: str
    count: int
    assignments: list[Assignment]
    more: bool


class CourseGrade(Answer):
    course: CourseRef
    current_score: float | None = Field(description="Percent of graded work; null: none graded, or hidden.")
    current_grade: str | None = Field(description="Letter so far, when the course has a grading scheme.")
    final_score: float | None = Field(description="Percent counting ungraded work as zero.")
    final_grade: str | None = None
    grading_period: str | None = None
    url: str = Field(description="Its Canvas grades page.")


class Grades(Answer):
    count: int
    courses: list[CourseGrade]
    note: str = Field(description="Say it with the scores.")


class Announcement(Answer):
    course: CourseRef | None
    title: CanvasText
    posted_at: str | None = Field(description="Campus time, ISO 8601.")
    posted_text: str | None = Field(description="The same in words.")
    author: CanvasText | None
    message: CanvasText = Field(description="Cut to 600 characters.")
    url: str | None


class Announcements(Answer):
    days: int
    timezone: str
    count: int
    announcements: list[Announcement]
    more: bool
