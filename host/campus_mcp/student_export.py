"""Everything the product holds about one student, as one JSON document (issue 28, point 4): for
``campus-mcp export --student ID`` (a records request to the privacy office) and the student's own
download on Recent activity. The same function builds both, so they cannot differ.

It holds the student's account (never a password hash or a sign-in secret), the apps connected and
the permissions each holds, the personal access tokens (names, permissions and dates, never a
secret), what else reads their data (the calendar feed), what each plugin keeps about them
(``register_student_data``: sections, friends, calendar settings, ...) and the whole access log
of their data that is still kept.
"""

from __future__ import annotations

from typing import Any

from campus_mcp.accounts import Student
from campus_mcp.connections import connections_of
from campus_mcp.db import utcnow
from campus_mcp.deployment import Deployment
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.oauth.students_cli import kind_of
from campus_mcp.student_access import entries

EXPORT_FORMAT = "campus-mcp student export 1"


async def student_export(deployment: Deployment, student_id: int) -> dict[str, Any]:
    """The export of ``student_id`` (an existing student; the caller found them)."""
    if deployment.access_log is not None:
        await deployment.access_log.write_pending()  # this process's latest calls too
    async with deployment.session(read_only=True) as session:
        student = await session.get(Student, student_id)
        if student is None:
            raise LookupError(f"no student with the id {student_id}")
        account = {
            "id": student.id,
            "username": student.username,
            "display_name": student.display_name,
            "email": student.email,
            "campus_id": student.campus_id,
            "signs_in_with": kind_of(student),
            "disabled": student.disabled,
            "created_at": student.created_at.isoformat(),
        }
        activity = [entry.as_dict() for entry in await entries(session, student_id=student_id)]
    held: dict[str, Any] = {}
    for data in deployment.registry.student_data:
        async with deployment.session(read_only=True) as session:
            held[data.key] = await data.read(session, student_id)
    apps = await OAuthStore(deployment.sessions).connected_apps(student_id)
    tokens = await PersonalTokens(deployment.sessions, deployment.settings).live(student_id)
    return {
        "format": EXPORT_FORMAT,
        "exported_at": utcnow().isoformat(),
        "product": deployment.settings.product_name,
        "campus": deployment.settings.campus_name,
        "student": account,
        "connected_apps": [
            {
                "client_id": app.client_id,
                "name": app.client_name,
                "permissions": list(app.scopes),
                "since": app.since.isoformat(),
            }
            for app in apps
        ],
        "personal_access_tokens": [
            {
                "name": token.name,
                "permissions": list(token.scopes),
                "created_at": token.created_at.isoformat(),
                "expires_at": token.expires_at.isoformat(),
                "last_used_at": token.last_used_at.isoformat() if token.last_used_at else None,
            }
            for token in tokens
        ],
        "other_connections": [
            {"title": found.connection.title, "state": found.state.summary if found.state else "unreadable"}
            for found in await connections_of(deployment, student_id)
        ],
        "data": held,
        "activity_kept_days": deployment.settings.student_access_days,
        "activity": activity,
    }
