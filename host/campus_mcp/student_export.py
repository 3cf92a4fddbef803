"""Everything the product holds about one student, as one JSON document (issue 28, point 4): for
``campus-mcp export --student ID`` (a records request to the privacy office) and the student's own
download on Recent activity. The same function builds both, so they cannot differ.

It holds the student's account (never a password hash or a sign-in secret), the apps connected now
and what else reads their data (the calendar feed), then every part of what is held: the host's
own (campus_mcp.student_records: tokens and sign-in codes given to apps, personal access tokens,
the access log) at the top level and each plugin's (``register_student_data``: sections, seat
watches, friends, calendar settings, ...) under ``data``. Each part names the tables it reads, and
``uncovered_student_tables`` names every table with a foreign key to ``students`` that no part
reads: complete by construction, since the export test fails on any.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import MetaData

from campus_mcp.accounts import Student
from campus_mcp.connections import connections_of
from campus_mcp.contributions import StudentData
from campus_mcp.db import Base, utcnow
from campus_mcp.deployment import Deployment
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.oauth.students_cli import kind_of
from campus_mcp.student_records import HOST_STUDENT_DATA

EXPORT_FORMAT = "campus-mcp student export 1"


def uncovered_student_tables(parts: Iterable[StudentData], metadata: MetaData = Base.metadata) -> list[str]:
    """The tables of ``metadata`` with a foreign key to ``students`` that neither the host's parts
    nor ``parts`` (a registry's ``student_data``) read: what the export would leave out."""
    covered = {table for part in (*HOST_STUDENT_DATA, *parts) for table in part.tables}
    return sorted(
        table.name
        for table in metadata.tables.values()
        if table.name not in covered
        and any(key.target_fullname.split(".")[0] == Student.__tablename__ for key in table.foreign_keys)
    )


async def _read(deployment: Deployment, part: StudentData, student_id: int) -> Any:
    async with deployment.session(read_only=True) as session:
        return await part.read(session, student_id)


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
            # Who the identity provider says they are (no secret): the campus's link to its records.
            "identity_provider": {"issuer": student.oidc_issuer, "subject": student.oidc_subject}
            if student.oidc_subject
            else None,
            "disabled": student.disabled,
            "created_at": student.created_at.isoformat(),
        }
    host = {part.key: await _read(deployment, part, student_id) for part in HOST_STUDENT_DATA}
    held = {part.key: await _read(deployment, part, student_id) for part in deployment.registry.student_data}
    apps = await OAuthStore(deployment.sessions).connected_apps(student_id)
    return {
        "format": EXPORT_FORMAT,
        "exported_at": utcnow().isoformat(),
        "product": deployment.settings.product_name,
        "campus": deployment.settings.campus_name,
        "student": account,
        # Who can read the student's data now; the parts below hold every row behind it.
        "connected_apps": [
            {
                "client_id": app.client_id,
                "name": app.client_name,
                "permissions": list(app.scopes),
                "since": app.since.isoformat(),
            }
            for app in apps
        ],
        "other_connections": [
            {"title": found.connection.title, "state": found.state.summary if found.state else "unreadable"}
            for found in await connections_of(deployment, student_id)
            if found.reads
        ],
        **host,
        "data": held,
        "activity_kept_days": deployment.settings.student_access_days,
    }
