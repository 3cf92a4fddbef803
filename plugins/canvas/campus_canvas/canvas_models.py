"""Canvas's JSON, typed: the fields the family reads of each object Canvas documents
(canvas.instructure.com/doc/api: Course, Enrollment, PlannerItem, Assignment, Submission,
DiscussionTopic as an announcement). Everything else Canvas sends is ignored; an item that does not
fit (a field of the wrong type) is left out of the list it came in, not a failure of the call.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


class CanvasObject(BaseModel):
    model_config = ConfigDict(extra="ignore")


def parse_all(model: type[M], items: Iterable[Any]) -> list[M]:
    """Each item as ``model``; the ones that do not fit are counted in the log, never quoted."""
    parsed: list[M] = []
    skipped = 0
    for item in items:
        try:
            parsed.append(model.model_validate(item))
        except ValidationError:
            skipped += 1
    if skipped:
        log.warning("left out %d Canvas %s object(s) that do not fit the documented shape", skipped, model.__name__)
    return parsed


class Enrollment(CanvasObject):
    type: str | None = None
    enrollment_state: str | None = None
    computed_current_score: float | None = None
    computed_current_grade: str | None = None
    computed_final_score: float | None = None
    computed_final_grade: str | None = None
    current_grading_period_title: str | None = None


class Course(CanvasObject):
    id: int
    name: str | None = None
    course_code: str | None = None
    hide_final_grades: bool = False
    enrollments: list[Enrollment] = []

    def student_enrollment(self) -> Enrollment | None:
        students = [e for e in self.enrollments if (e.type or "").lower() in ("student", "studentenrollment")]
        return students[0] if students else None


class SubmissionFlags(CanvasObject):
    """A planner item's ``submissions`` object (``false`` when the item takes no submission)."""

    submitted: bool | None = False
    excused: bool | None = False
    graded: bool | None = False
    late: bool | None = False
    missing: bool | None = False


class Plannable(CanvasObject):
    id: int | str | None = None
    title: str | None = None
    due_at: datetime | None = None
    todo_date: datetime | None = None
    points_possible: float | None = None


class PlannerItem(CanvasObject):
    plannable_type: str
    course_id: int | None = None
    context_name: str | None = None
    plannable_date: datetime | None = None
    plannable: Plannable | None = None
    submissions: SubmissionFlags | None = None
    html_url: str | None = None

    @field_validator("submissions", mode="before")
    @classmethod
    def _false_is_none(cls, value: Any) -> Any:
        return None if value is False else value

    def due(self) -> datetime | None:
        if self.plannable is not None and (self.plannable.due_at or self.plannable.todo_date):
            return self.plannable.due_at or self.plannable.todo_date
        return self.plannable_date


class Submission(CanvasObject):
    workflow_state: str | None = None
    submitted_at: datetime | None = None
    late: bool | None = False
    missing: bool | None = False
    excused: bool | None = False
    score: float | None = None
    grade: str | None = None


class Assignment(CanvasObject):
    id: int
    name: str | None = None
    description: str | None = None
    due_at: datetime | None = None
    points_possible: float | None = None
    course_id: int | None = None
    html_url: str | None = None
    is_quiz_assignment: bool = False
    submission: Submission | None = None
    course: Course | None = None


class Author(CanvasObject):
    display_name: str | None = None


class Announcement(CanvasObject):
    id: int
    title: str | None = None
    message: str | None = None
    posted_at: datetime | None = None
    context_code: str | None = None
    html_url: str | None = None
    author: Author | None = None

    @field_validator("author", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return value or None
