"""The student's Recent activity page: every read and change of their data by an app in the last
90 days (what, when, which app, how it ended), from the access log (campus_mcp.students.access_log),
and the download of everything the product holds about them (campus_mcp.students.export).

A student sees only their own: both pages read the session's student, never an id from the request.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.base.db import utcnow
from campus_mcp.dashboard.chrome import ACTIVITY_PAGE, dashboard_page, when
from campus_mcp.oauth.session import session_user, to_login
from campus_mcp.students.access_log import AccessEntry, entries
from campus_mcp.students.export import student_export

EXPORT_PATH = f"{ACTIVITY_PAGE}/export"
SHOWN_DAYS = 90
# A page, not a file: past this many rows the download has the rest.
SHOWN_ROWS = 500
NO_PARITY = {"exclude_from_parity": True}

# How a call ended, in the student's words (the outcomes of campus_mcp.base.metrics and the REST twins).
OUTCOMES = {
    "ok": "Done",
    "unchanged": "Done (nothing new since its last read)",
    "input_required": "Asked you to confirm",
    "declined": "You declined",
    "cancelled": "Cancelled",
    "denied": "Refused: the app lacks the permission",
    "rate_limited": "Refused: too many requests",
    "invalid_arguments": "Refused: the app asked wrongly",
    "error": "Failed",
}


def what(deployment: Deployment, entry: AccessEntry) -> str:
    """The tool's title, read or changed ("Read: My courses"); the feed is the feed."""
    if entry.app_kind == "feed":
        return "Read: your calendar (the feed)"
    tool = deployment.registry.tools.get(entry.action)
    if tool is None:
        return entry.action
    return f"{'Changed' if tool.writes else 'Read'}: {tool.title}"


def _row(deployment: Deployment, entry: AccessEntry, zone: ZoneInfo) -> str:
    return (
        "<tr>"
        f'<td data-label="When" class="nowrap">{escape(when(entry.at, zone))}</td>'
        f'<td data-label="What">{escape(what(deployment, entry))}</td>'
        f'<td data-label="App">{escape(entry.app_name)}</td>'
        f'<td data-label="Result">{escape(OUTCOMES.get(entry.outcome, entry.outcome))}</td>'
        "</tr>"
    )


class ActivityController(Controller):
    path = "/"

    @get(ACTIVITY_PAGE, opt={**NO_PARITY, "dashboard_nav": "Recent activity"}, include_in_schema=False)
    async def activity(self, request: Request[Any, Any, Any], deployment: NamedDependency[Deployment]) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(ACTIVITY_PAGE)
        if deployment.access_log is not None:
            await deployment.access_log.write_pending()  # this process's latest calls too
        async with deployment.session(read_only=True) as session:
            found = await entries(
                session, student_id=user[0], since=utcnow() - timedelta(days=SHOWN_DAYS), limit=SHOWN_ROWS + 1
            )
        zone = ZoneInfo(deployment.settings.timezone)
        more = (
            f"<p class=muted>The {SHOWN_ROWS} newest are shown; the download has every one.</p>"
            if len(found) > SHOWN_ROWS
            else ""
        )
        table = (
            '<table><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">App</th>'
            f'<th scope="col">Result</th></tr></thead><tbody>{"".join(_row(deployment, e, zone) for e in found[:SHOWN_ROWS])}'
            "</tbody></table>"
            if found
            else f"<p>No app has read or changed your data in the last {SHOWN_DAYS} days.</p>"
        )
        body = (
            "<h1>Recent activity</h1>"
            f"<p>Every time an app read or changed your data in the last {SHOWN_DAYS} days: what, when and which "
            "app. To stop an app, disconnect it in "
            '<a href="/dashboard/settings#connected-apps">Settings, Connected apps</a>.</p>'
            f'<section class="card" aria-labelledby="activity-title"><h2 id="activity-title">Reads and changes</h2>'
            f"{more}{table}</section>"
            '<section class="card" aria-labelledby="export-title"><h2 id="export-title">Your data</h2>'
            f"<p>Download everything {escape(deployment.settings.product_name)} holds about you (your account, "
            "apps, tokens without their secrets, schedule, friends, settings and this activity) as one JSON file.</p>"
            f'<p><a href="{EXPORT_PATH}" download>Download my data</a></p></section>'
        )
        return dashboard_page(deployment, request, "Recent activity", body)

    @get(EXPORT_PATH, opt=NO_PARITY, include_in_schema=False)
    async def export(self, request: Request[Any, Any, Any], deployment: NamedDependency[Deployment]) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(ACTIVITY_PAGE)
        document = await student_export(deployment, user[0])
        return Response(
            json.dumps(document, indent=2, ensure_ascii=False).encode(),
            media_type="application/json",
            headers={
                "Content-Disposition": f'attachment; filename="{re.sub(r"[^A-Za-z0-9._-]", "_", user[1])}-data.json"',
                "Cache-Control": "no-store",
            },
        )
