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
STATE_WORDS = (
    "state: submitted (handed in), graded, late (handed in after the due time), missing (past due, not "
    "handed in), excused, not_submitted (not handed in yet, not past due), nothing_to_submit (a to-do or a "
    "page to read)."
)
MAX_WINDOW_DAYS = 60


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DueWorkQuery(Arguments):
    start_date: date | None = Field(default=None, description="First day, YYYY-MM-DD, campus time. Default: today.")
    end_date: date | None = Field(
        default=None,
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
    id: str = Field(description="The course's Canvas id.")
    name: str = Field(description="The course's name in Canvas.")
    code: str | None = Field(default=None, description="The course code, such as MATH 1750.")


class WorkItem(Answer):
    course: CourseRef | None
    title: CanvasText = Field(description="The title, as the teacher wrote it.")
    kind: str = Field(description="assignment, quiz, discussion_topic, wiki_page, planner_note or peer_review.")
    due_at: str | None = Field(description="Due time, ISO 8601 with the campus's offset; null: no due time.")
    due_text: str | None = Field(description="Due time in words, campus time, 12-hour: Friday, September 12, 11:59 PM.")
    state: WorkState = Field(description=STATE_WORDS)
    points_possible: float | None = None
    url: str | None = Field(description="The item's page in Canvas.")


class DueWork(Answer):
    start_date: date
    end_date: date
    timezone: str = Field(description="The campus time zone every time is in.")
    count: int
    items: list[WorkItem]
    more: bool = Field(description="True: there is more than the limit; ask for a shorter window.")


class MissingWork(Answer):
    timezone: str
    count: int
    items: list[WorkItem]
    more: bool


class Assignment(WorkItem):
    description: CanvasText | None = Field(description="The instructions, HTML removed, cut to 600 characters.")
    score: float | None = Field(description="The student's score, when graded and released.")
    grade: str | None = Field(description="The grade as Canvas shows it (a letter, points, complete), when released.")
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
    current_score: float | None = Field(description="Percent on graded work so far; null: nothing graded or hidden.")
    current_grade: str | None = Field(description="The letter grade so far, when the course uses a grading scheme.")
    final_score: float | None = Field(description="Percent counting ungraded work as zero.")
    final_grade: str | None = None
    grading_period: str | None = Field(description="The current grading period, when the course has them.")
    url: str = Field(description="The course's grades page in Canvas.")


class Grades(Answer):
    count: int
    courses: list[CourseGrade]
    note: str = Field(description="What the scores mean; say it with them.")


class Announcement(Answer):
    course: CourseRef | None
    title: CanvasText
    posted_at: str | None = Field(description="When it was posted, ISO 8601, campus offset.")
    posted_text: str | None = Field(description="When it was posted, in words, campus time.")
    author: CanvasText | None = Field(description="Who posted it, as Canvas names them.")
    message: CanvasText = Field(description="The message, HTML removed, cut to 600 characters.")
    url: str | None


class Announcements(Answer):
    days: int
    timezone: str
    count: int
    announcements: list[Announcement]
    more: bool
