"""The five reads of the Canvas family, each one call's worth of Canvas requests.

- due work: ``GET /api/v1/planner/items`` for the window (every current course at once, not one
  request per course);
- missing work: ``GET /api/v1/users/self/missing_submissions`` (``include[]=course``);
- one course's assignments: the course list (to find the course from the student's words), then
  ``GET /api/v1/courses/:id/assignments`` with ``include[]=submission``;
- grades: ``GET /api/v1/courses`` with ``include[]=total_scores`` (names and scores in one list);
- announcements: the course list, then ``GET /api/v1/announcements`` with every course's
  ``context_codes[]``.

The course list is one cached read shared by three of them. Canvas's JSON is read into the typed
models of ``canvas_models``; what does not fit is left out of the answer, never a failure of the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from campus_mcp import InvalidInput, Settings, campus_time_text

from campus_canvas import canvas_models as canvas
from campus_canvas.reader import CanvasReader
from campus_canvas.schemas import (
    Announcement,
    Announcements,
    AnnouncementsQuery,
    Assignment,
    CourseAssignments,
    CourseAssignmentsQuery,
    CourseGrade,
    CourseRef,
    DueWork,
    DueWorkQuery,
    Grades,
    GradesQuery,
    MissingWork,
    MissingWorkQuery,
    WorkItem,
    WorkState,
)
from campus_canvas.text import canvas_text, canvas_title

# Planner items that are work to do (calendar events and announcements are not).
WORK_KINDS = {
    "assignment",
    "quiz",
    "discussion_topic",
    "wiki_page",
    "planner_note",
    "assessment_request",
    "sub_assignment",
}
KIND_WORDS = {"assessment_request": "peer_review"}
GRADES_NOTE = (
    "current_score counts graded work only; final_score counts missing and ungraded work as zero. Scores "
    "are Canvas's as posted: the teacher may still change them."
)


def campus_today(settings: Settings) -> date:
    return datetime.now(ZoneInfo(settings.timezone)).date()


def _when(moment: datetime | None, settings: Settings) -> tuple[str | None, str | None]:
    if moment is None:
        return None, None
    return moment.astimezone(ZoneInfo(settings.timezone)).isoformat(), campus_time_text(moment, settings.timezone)


def absolute(url: str | None, origin: str) -> str | None:
    """Canvas gives some page links as paths (the planner's): made whole on the Canvas origin."""
    if not url:
        return None
    if url.startswith("/") and not url.startswith("//"):
        return f"{origin}{url}"
    return url if url.startswith(origin + "/") else None


def state_of(flags: canvas.SubmissionFlags | None) -> WorkState:
    """The planner's submission flags as one state."""
    if flags is None:
        return "nothing_to_submit"
    if flags.excused:
        return "excused"
    if flags.missing:
        return "missing"
    if flags.late and (flags.submitted or flags.graded):
        return "late"
    if flags.graded:
        return "graded"
    if flags.submitted:
        return "submitted"
    # Past due and not handed in is "missing" only when Canvas says so: work handed in on paper or
    # with no submission at all is never missing in Canvas, and neither is it here.
    return "not_submitted"


def submission_state(submission: canvas.Submission | None) -> WorkState:
    """An assignment's submission object (``include[]=submission``) as one state."""
    if submission is None:
        return "not_submitted"
    if submission.excused:
        return "excused"
    if submission.missing:
        return "missing"
    handed_in = submission.submitted_at is not None or submission.workflow_state in (
        "submitted",
        "graded",
        "pending_review",
    )
    if submission.late and handed_in:
        return "late"
    if submission.workflow_state == "graded" and (handed_in or submission.score is not None):
        return "graded"
    if handed_in:
        return "submitted"
    return "not_submitted"


def _ref(course: canvas.Course | None) -> CourseRef | None:
    if course is None:
        return None
    return CourseRef(id=str(course.id), name=course.name or f"Course {course.id}", code=course.course_code)


async def current_courses(reader: CanvasReader) -> list[canvas.Course]:
    """The student's current courses in Canvas, with their scores (one list, cached)."""
    page = await reader.list(
        "/api/v1/courses",
        (
            ("enrollment_state", "active"),
            ("enrollment_type", "student"),
            ("include[]", "total_scores"),
            ("include[]", "current_grading_period_scores"),
        ),
    )
    return canvas.parse_all(canvas.Course, page.items)


def find_courses(courses: Sequence[canvas.Course], words: str) -> list[canvas.Course]:
    """The courses ``words`` names: an id, a code (``MATH 1750``, ``math1750``) or words of a name."""
    wanted = " ".join(words.lower().split())
    squashed = wanted.replace(" ", "")
    exact = [c for c in courses if str(c.id) == wanted or (c.course_code or "").lower().replace(" ", "") == squashed]
    if exact:
        return exact
    terms = wanted.split()
    return [c for c in courses if all(term in f"{c.name or ''} {c.course_code or ''}".lower() for term in terms)]


def one_course(courses: Sequence[canvas.Course], words: str) -> canvas.Course:
    found = find_courses(courses, words)
    listed = "; ".join(f"{c.course_code or c.id}: {c.name}" for c in courses) or "none"
    if not found:
        raise InvalidInput(
            f"None of your current Canvas courses matches {words[:120]!r}. Your courses: {listed}. Ask again with one "
            "of them.",
            field="course",
        )
    if len(found) > 1:
        which = "; ".join(f"{c.course_code or c.id}: {c.name}" for c in found)
        raise InvalidInput(
            f"{words[:120]!r} matches several of your courses ({which}): ask again with its code.", field="course"
        )
    return found[0]


def _window(args: DueWorkQuery, settings: Settings) -> tuple[date, date, datetime, datetime]:
    first = args.start_date or campus_today(settings)
    last = args.end_date or first + timedelta(days=6)
    if last < first:
        raise InvalidInput("end_date is before start_date: give the first day, then the last day", field="end_date")
    zone = ZoneInfo(settings.timezone)
    start = datetime.combine(first, time(), tzinfo=zone)
    end = datetime.combine(last + timedelta(days=1), time(), tzinfo=zone)
    return first, last, start, end


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def due_work(reader: CanvasReader, args: DueWorkQuery, settings: Settings) -> DueWork:
    first, last, start, end = _window(args, settings)
    page = await reader.list("/api/v1/planner/items", (("start_date", _utc(start)), ("end_date", _utc(end))))
    items = [i for i in canvas.parse_all(canvas.PlannerItem, page.items) if i.plannable_type in WORK_KINDS]
    courses = {c.id: c for c in await _courses_if_needed(reader, items)}
    work: list[WorkItem] = []
    for item in items:
        due = item.due()
        if due is not None and not (start <= due < end):
            continue  # Canvas's window is by day in the student's Canvas zone: the campus's is the one asked for
        state = state_of(item.submissions)
        if not args.include_done and state not in ("not_submitted", "missing"):
            continue
        course = courses.get(item.course_id) if item.course_id is not None else None
        work.append(_work_item(item, course, due, state, reader.origin, settings))
    work.sort(key=lambda w: (w.due_at is None, w.due_at or ""))
    return DueWork(
        start_date=first,
        end_date=last,
        timezone=settings.timezone,
        count=min(len(work), args.limit),
        items=work[: args.limit],
        more=len(work) > args.limit or page.more,
    )


async def _courses_if_needed(reader: CanvasReader, items: Sequence[canvas.PlannerItem]) -> list[canvas.Course]:
    # The planner names each course (context_name); the course list adds its code. It is cached and
    # shared with the other tools, so the planner's window costs one request of its own.
    return await current_courses(reader) if items else []


def _work_item(
    item: canvas.PlannerItem,
    course: canvas.Course | None,
    due: datetime | None,
    state: WorkState,
    origin: str,
    settings: Settings,
) -> WorkItem:
    due_at, due_text = _when(due, settings)
    ref = _ref(course)
    if ref is None and item.course_id is not None:
        ref = CourseRef(id=str(item.course_id), name=item.context_name or f"Course {item.course_id}")
    return WorkItem(
        course=ref,
        title=canvas_title(item.plannable.title if item.plannable else None),
        kind=KIND_WORDS.get(item.plannable_type, item.plannable_type),
        due_at=due_at,
        due_text=due_text,
        state=state,
        points_possible=item.plannable.points_possible if item.plannable else None,
        url=absolute(item.html_url, origin),
    )


async def missing_work(reader: CanvasReader, args: MissingWorkQuery, settings: Settings) -> MissingWork:
    page = await reader.list(
        "/api/v1/users/self/missing_submissions", (("include[]", "course"), ("filter[]", "submittable"))
    )
    found = canvas.parse_all(canvas.Assignment, page.items)
    found.sort(key=lambda a: (a.due_at is None, a.due_at or datetime.max.replace(tzinfo=UTC)))
    items = []
    for assignment in found[: args.limit]:
        due_at, due_text = _when(assignment.due_at, settings)
        items.append(
            WorkItem(
                course=_ref(assignment.course)
                or (
                    CourseRef(id=str(assignment.course_id), name=f"Course {assignment.course_id}")
                    if assignment.course_id
                    else None
                ),
                title=canvas_title(assignment.name),
                kind="quiz" if assignment.is_quiz_assignment else "assignment",
                due_at=due_at,
                due_text=due_text,
                state="missing",
                points_possible=assignment.points_possible,
                url=absolute(assignment.html_url, reader.origin),
            )
        )
    return MissingWork(
        timezone=settings.timezone, count=len(items), items=items, more=len(found) > args.limit or page.more
    )


BUCKETS = {"upcoming": "upcoming", "past": "past", "overdue": "overdue", "undated": "undated"}


async def course_assignments(
    reader: CanvasReader, args: CourseAssignmentsQuery, settings: Settings
) -> CourseAssignments:
    course = one_course(await current_courses(reader), args.course)
    params: list[tuple[str, str]] = [("include[]", "submission"), ("order_by", "due_at")]
    if args.which in BUCKETS:
        params.append(("bucket", BUCKETS[args.which]))
    page = await reader.list(f"/api/v1/courses/{course.id}/assignments", params)
    found = canvas.parse_all(canvas.Assignment, page.items)
    found.sort(key=lambda a: (a.due_at is None, a.due_at or datetime.max.replace(tzinfo=UTC)))
    ref = _ref(course)
    assert ref is not None
    assignments = []
    for assignment in found[: args.limit]:
        due_at, due_text = _when(assignment.due_at, settings)
        submission = assignment.submission
        submitted_at, _text = _when(submission.submitted_at if submission else None, settings)
        assignments.append(
            Assignment(
                course=ref,
                title=canvas_title(assignment.name),
                kind="quiz" if assignment.is_quiz_assignment else "assignment",
                due_at=due_at,
                due_text=due_text,
                state=submission_state(submission),
                points_possible=assignment.points_possible,
                url=absolute(assignment.html_url, reader.origin),
                description=canvas_text(assignment.description) if assignment.description else None,
                score=submission.score if submission else None,
                grade=submission.grade if submission else None,
                submitted_at=submitted_at,
            )
        )
    return CourseAssignments(
        course=ref,
        which=args.which,
        timezone=settings.timezone,
        count=len(assignments),
        assignments=assignments,
        more=len(found) > args.limit or page.more,
    )


async def grades(reader: CanvasReader, args: GradesQuery, settings: Settings) -> Grades:
    courses = await current_courses(reader)
    if args.course:
        courses = find_courses(courses, args.course)
        if not courses:
            one_course(await current_courses(reader), args.course)  # raises, naming the student's courses
    listed = []
    for course in courses:
        enrollment = course.student_enrollment()
        ref = _ref(course)
        assert ref is not None
        listed.append(
            CourseGrade(
                course=ref,
                current_score=_score(enrollment, "current_score", course),
                current_grade=_grade(enrollment, "current_grade", course),
                final_score=_score(enrollment, "final_score", course),
                final_grade=_grade(enrollment, "final_grade", course),
                grading_period=enrollment.current_grading_period_title if enrollment else None,
                url=f"{reader.origin}/courses/{course.id}/grades",
            )
        )
    return Grades(count=len(listed), courses=listed, note=GRADES_NOTE)


def _score(enrollment: canvas.Enrollment | None, what: str, course: canvas.Course) -> float | None:
    if enrollment is None or (course.hide_final_grades and what == "final_score"):
        return None
    value: Any = getattr(enrollment, f"computed_{what}", None)
    return float(value) if isinstance(value, int | float) else None


def _grade(enrollment: canvas.Enrollment | None, what: str, course: canvas.Course) -> str | None:
    if enrollment is None or (course.hide_final_grades and what == "final_grade"):
        return None
    value: Any = getattr(enrollment, f"computed_{what}", None)
    return value if isinstance(value, str) else None


async def announcements(reader: CanvasReader, args: AnnouncementsQuery, settings: Settings) -> Announcements:
    courses = await current_courses(reader)
    if args.course:
        courses = [one_course(courses, args.course)]
    if not courses:
        return Announcements(days=args.days, timezone=settings.timezone, count=0, announcements=[], more=False)
    now = datetime.now(UTC)
    params: list[tuple[str, str]] = [("context_codes[]", f"course_{c.id}") for c in courses]
    params += [("start_date", _utc(now - timedelta(days=args.days))), ("end_date", _utc(now + timedelta(days=1)))]
    page = await reader.list("/api/v1/announcements", params)
    by_code = {f"course_{c.id}": c for c in courses}
    found = canvas.parse_all(canvas.Announcement, page.items)
    found.sort(key=lambda a: a.posted_at or datetime.min.replace(tzinfo=UTC), reverse=True)
    listed = []
    for item in found[: args.limit]:
        posted_at, posted_text = _when(item.posted_at, settings)
        author = item.author.display_name if item.author else None
        listed.append(
            Announcement(
                course=_ref(by_code.get(item.context_code or "")),
                title=canvas_title(item.title),
                posted_at=posted_at,
                posted_text=posted_text,
                author=canvas_title(author) if author else None,
                message=canvas_text(item.message),
                url=absolute(item.html_url, reader.origin),
            )
        )
    return Announcements(
        days=args.days,
        timezone=settings.timezone,
        count=len(listed),
        announcements=listed,
        more=len(found) > args.limit or page.more,
    )
