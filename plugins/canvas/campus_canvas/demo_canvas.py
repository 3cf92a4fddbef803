"""The demo Canvas: a few of Canvas's paths answered inside the process, for the demo campus.

In demo mode without a configured Canvas, the family's HTTP client gets this transport instead of a
network: the same client code (pagination, error kinds, the token grants) reads answers shaped as
Canvas documents them (canvas.instructure.com/doc/api: Courses with ``include[]=total_scores``,
Planner items, missing submissions, Assignments with ``include[]=submission``, Announcements, and
the OAuth2 token endpoint), about three demo courses whose work falls around today, so "what's due
this week?" always has an answer. Every demo student sees the same courses. It is never reached
outside demo mode: a configured Canvas wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

import httpx

from campus_canvas.settings import DEMO_ORIGIN


@dataclass(frozen=True)
class _Work:
    id: int
    course: int
    name: str
    kind: str  # assignment, quiz, discussion_topic
    due_in_days: int
    points: float
    state: str  # unsubmitted, submitted, graded, late, missing, excused
    description: str = ""
    score: float | None = None


COURSES = {
    101: ("Calculus I", "MATH 1750", 88.4, "B+"),
    102: ("Computer Science I", "COMP 1000", 93.1, "A"),
    103: ("English Composition", "ENGL 1100", 79.5, "C+"),
}
WORK = (
    _Work(
        5001,
        101,
        "Problem Set 5",
        "assignment",
        2,
        20,
        "unsubmitted",
        "<p>Sections 3.1 to 3.4: problems <b>2, 6, 14</b>.</p>",
    ),
    _Work(5002, 101, "Quiz 4: derivatives", "quiz", 4, 10, "unsubmitted"),
    _Work(5003, 101, "Problem Set 4", "assignment", -5, 20, "graded", "<p>Limits.</p>", 18),
    _Work(5004, 101, "Problem Set 3b", "assignment", -3, 10, "missing", "<p>The make-up set.</p>"),
    _Work(
        5101,
        102,
        "Lab 6: loops",
        "assignment",
        1,
        10,
        "submitted",
        "<p>Write the three loops in <code>lab6.py</code>.</p>",
    ),
    _Work(
        5102,
        102,
        "Project 2: text adventure",
        "assignment",
        9,
        100,
        "unsubmitted",
        "<h2>Project 2</h2><p>Build a game.</p>",
    ),
    _Work(5103, 102, "Lab 5: conditionals", "assignment", -6, 10, "late", "<p>If and else.</p>", 8),
    _Work(5201, 103, "Essay draft", "assignment", 3, 50, "unsubmitted", "<p>Draft of <i>essay 2</i>, 1,200 words.</p>"),
    _Work(5202, 103, "Reading response 4", "assignment", -2, 5, "excused"),
    _Work(5203, 103, "Discussion: sources", "discussion_topic", 5, 5, "unsubmitted", "<p>Post one source.</p>"),
)
ANNOUNCEMENTS = (
    (7001, 101, "Office hours moved", -1, "<p>Thursday's office hours are at <b>3 PM</b> this week.</p>"),
    (7002, 102, "Project 2 is posted", -3, "<p>Read the brief before Monday's lab.</p>"),
)


def _due(work: _Work, now: datetime) -> datetime:
    return (now + timedelta(days=work.due_in_days)).replace(minute=59, second=0, microsecond=0)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _flags(work: _Work) -> dict[str, Any]:
    return {
        "submitted": work.state in ("submitted", "graded", "late"),
        "excused": work.state == "excused",
        "graded": work.state in ("graded", "late"),
        "late": work.state == "late",
        "missing": work.state == "missing",
        "needs_grading": work.state == "submitted",
        "has_feedback": False,
        "redo_request": False,
    }


def _course(course_id: int) -> dict[str, Any]:
    name, code, score, grade = COURSES[course_id]
    return {
        "id": course_id,
        "name": name,
        "course_code": code,
        "workflow_state": "available",
        "enrollments": [
            {
                "type": "student",
                "role": "StudentEnrollment",
                "enrollment_state": "active",
                "computed_current_score": score,
                "computed_current_grade": grade,
                "computed_final_score": round(score * 0.8, 1),
                "computed_final_grade": None,
            }
        ],
    }


def _assignment(work: _Work, now: datetime) -> dict[str, Any]:
    workflow = {"unsubmitted": "unsubmitted", "missing": "unsubmitted", "excused": "graded"}.get(work.state, work.state)
    if workflow == "late":
        workflow = "graded"
    return {
        "id": work.id,
        "name": work.name,
        "description": work.description,
        "due_at": _iso(_due(work, now)),
        "points_possible": work.points,
        "course_id": work.course,
        "html_url": f"{DEMO_ORIGIN}/courses/{work.course}/assignments/{work.id}",
        "submission_types": ["online_upload"],
        "submission": {
            "assignment_id": work.id,
            "workflow_state": workflow,
            "submitted_at": _iso(_due(work, now) - timedelta(hours=2)) if _flags(work)["submitted"] else None,
            "late": work.state == "late",
            "missing": work.state == "missing",
            "excused": work.state == "excused",
            "score": work.score,
            "grade": None if work.score is None else str(work.score),
        },
    }


def _planner_item(work: _Work, now: datetime) -> dict[str, Any]:
    due = _iso(_due(work, now))
    return {
        "context_type": "Course",
        "course_id": work.course,
        "plannable_id": work.id,
        "plannable_type": work.kind,
        "plannable_date": due,
        "plannable": {"id": work.id, "title": work.name, "due_at": due, "points_possible": work.points},
        "submissions": _flags(work),
        "planner_override": None,
        "new_activity": False,
        "context_name": COURSES[work.course][0],
        "html_url": f"/courses/{work.course}/assignments/{work.id}",
    }


def _between(query: dict[str, list[str]], moment: datetime) -> bool:
    start, end = query.get("start_date", [""])[0], query.get("end_date", [""])[0]
    if start and moment < datetime.fromisoformat(start.replace("Z", "+00:00")):
        return False
    return not (end and moment > datetime.fromisoformat(end.replace("Z", "+00:00")))


def _answer(path: str, method: str, query: dict[str, list[str]], now: datetime) -> tuple[int, Any]:
    if path == "/login/oauth2/token":
        if method == "DELETE":
            return 200, {}
        return 200, {
            "access_token": "demo-access-token",
            "token_type": "Bearer",
            "refresh_token": "demo-refresh-token",
            "expires_in": 3600,
            "user": {"id": 4242, "name": "Demo Student"},
        }
    if method != "GET":
        return 404, {"errors": [{"message": "The specified resource does not exist."}]}
    if path == "/api/v1/courses":
        return 200, [_course(course) for course in COURSES]
    if path == "/api/v1/planner/items":
        return 200, [_planner_item(w, now) for w in _by_due(now) if _between(query, _due(w, now))]
    if path == "/api/v1/users/self/missing_submissions":
        return 200, [
            _assignment(w, now) | {"course": {"id": w.course, "name": COURSES[w.course][0]}}
            for w in _by_due(now)
            if w.state == "missing"
        ]
    if path.startswith("/api/v1/courses/") and path.endswith("/assignments"):
        course = path.split("/")[4]
        if not course.isdigit() or int(course) not in COURSES:
            return 404, {"errors": [{"message": "The specified resource does not exist."}]}
        return 200, [_assignment(w, now) for w in _by_due(now) if w.course == int(course)]
    if path == "/api/v1/announcements":
        wanted = set(query.get("context_codes[]", []))
        return 200, [
            {
                "id": number,
                "title": title,
                "message": message,
                "posted_at": _iso(now + timedelta(days=days)),
                "context_code": f"course_{course}",
                "html_url": f"{DEMO_ORIGIN}/courses/{course}/discussion_topics/{number}",
                "author": {"id": 9, "display_name": "Prof. Demo"},
            }
            for number, course, title, days, message in ANNOUNCEMENTS
            if f"course_{course}" in wanted
        ]
    return 404, {"errors": [{"message": "The specified resource does not exist."}]}


def _by_due(now: datetime) -> Iterator[_Work]:
    yield from sorted(WORK, key=lambda w: _due(w, now))


def _sparse(path: str, method: str, now: datetime) -> tuple[int, Any]:
    """The awkward Canvas of the sparse examples: nulls wherever Canvas allows them, empty lists."""
    due = _iso(now + timedelta(days=1))
    if path == "/api/v1/courses":
        return 200, [{"id": 301, "name": None, "course_code": None, "enrollments": []}]
    if path == "/api/v1/planner/items":
        return 200, [
            {
                "plannable_type": "planner_note",
                "course_id": None,
                "plannable_date": due,
                "plannable": {"title": None},
                "submissions": False,
                "html_url": None,
            },
            {
                "plannable_type": "assignment",
                "course_id": 301,
                "plannable_date": due,
                "plannable": {"id": 1, "title": "", "due_at": None, "points_possible": None},
                "submissions": {},
            },
        ]
    if path == "/api/v1/courses/301/assignments":
        return 200, [
            {"id": 1, "name": None, "description": None, "due_at": None, "points_possible": None, "submission": None}
        ]
    if path == "/api/v1/announcements":
        return 200, [{"id": 2, "title": None, "message": None, "posted_at": None, "author": {}, "context_code": None}]
    return _answer(path, method, {}, now) if path == "/login/oauth2/token" else (200, [])


def demo_tokens(row: Any) -> tuple[str, None]:
    """A demo row's token (no secret is kept for the demo Canvas): ``demo:<its Canvas user>``."""
    return f"demo:{row.canvas_user_id}", None


def _handle(request: httpx.Request) -> httpx.Response:
    query = parse_qs(request.url.query.decode(), keep_blank_values=True)
    # The hour, not the second: two reads of one answer in the same hour are the same bytes (the MCP
    # fast path is compared with the SDK's on them), and every date still lies where it should.
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    if request.headers.get("authorization") == "Bearer demo:sparse":
        status, body = _sparse(request.url.path, request.method, now)
    else:
        status, body = _answer(request.url.path, request.method, query, now)
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "X-Rate-Limit-Remaining": "700.0",
        "X-Request-Cost": "1.0",
    }
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="canvas-lms"'
    return httpx.Response(status, content=json.dumps(body).encode(), headers=headers)


def demo_transport() -> httpx.MockTransport:
    """The demo Canvas as an httpx transport (no socket is opened)."""
    return httpx.MockTransport(_handle)
