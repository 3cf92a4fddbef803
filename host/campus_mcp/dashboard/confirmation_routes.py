"""``/confirm/{id}``: the page where the signed-in student confirms a change a client asked for.

The page is the only place a change waiting under ``confirmation_fallback = "page"`` (or sent to
through URL-mode elicitation) can be made: GET shows the question exactly as the tool worded it,
with Confirm and Cancel; POST takes the student's browser session and the session's CSRF token,
never a bearer token, so a client holding the link and its token cannot press Confirm itself.

Not signed in: the login page, then back here. A link of another student, an unknown one, one
past its time or already used changes nothing, and the page says which (another student's reads
as unknown, so a link says nothing about whose it is). Confirm plans the change again: when the
record moved on since the question, nothing changes and the student is sent back to the chat.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from html import escape
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from campus_mcp.assembly.access import check_call
from campus_mcp.assembly.deployment import Deployment
from campus_mcp.base import metrics
from campus_mcp.mcp import confirmation_page
from campus_mcp.mcp.confirmation_page import PAGE_PATH, PendingConfirmation
from campus_mcp.oauth.pages import hidden
from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, to_login
from campus_mcp.plugin.errors import CampusError
from campus_mcp.plugin.principal import Principal

log = logging.getLogger(__name__)

NO_PARITY = {"exclude_from_parity": True}
TITLE = "Confirm a change"
UNKNOWN = "This confirmation link is not one of yours, or it is unknown. Nothing was changed."
EXPIRED = "This confirmation link has expired, so nothing was changed. Ask your assistant to make the change again."
EXPIRED_FORM = "The form expired, so nothing was changed. Reload the page and try again."
DONE = "This change was already made. It is not made again."
CANCELLED = "You cancelled this change. Nothing was changed."
APPLYING = "This change is being made. Reload the page in a moment to see that it was."
FAILED = "This change could not be made. Nothing was changed; ask your assistant to try again."
STALE = (
    "Your data changed since this question was asked, so this change was not made. Ask your assistant "
    "again: it gets the question as things are now."
)
NOTHING = "Nothing needed changing: your data is already as this change would make it."
_SETTLED = {"done": DONE, "cancelled": CANCELLED, "applying": APPLYING, "failed": FAILED, "stale": STALE}


def _question(message: str) -> str:
    # The tool's words, escaped, one paragraph a line: a plugin's question is plain text.
    return "".join(f"<p>{escape(line)}</p>" if line.strip() else "" for line in message.splitlines())


def _notice(text: str, *, alert: bool = False) -> str:
    role = "alert" if alert else "status"
    return f'<p role="{role}">{escape(text)}</p><p><a href="/dashboard">Back to the dashboard</a></p>'


def _form(row: PendingConfirmation, csrf: str) -> str:
    action = f"{PAGE_PATH}/{escape(row.id)}"
    return (
        '<section class="card" aria-labelledby="question-title"><h2 id="question-title">The change</h2>'
        f'<div class="question">{_question(row.message)}</div>'
        f'<p class="muted">Asked through your assistant ({escape(row.tool)}). Nothing changes until you press '
        "Confirm.</p>"
        f'<div class="actions"><form method="post" action="{action}">{hidden(CSRF_FIELD, csrf)}'
        f"{hidden('decision', 'confirm')}"
        '<button type="submit" class="primary">Confirm</button></form>'
        f'<form method="post" action="{action}">{hidden(CSRF_FIELD, csrf)}{hidden("decision", "cancel")}'
        '<button type="submit">Cancel</button></form></div></section>'
    )


async def _mine(deployment: Deployment, pending_id: str, student_id: int) -> PendingConfirmation | None:
    row = await confirmation_page.find(deployment.sessions, pending_id)
    return row if row is not None and row.student_id == student_id else None


async def apply(deployment: Deployment, row: PendingConfirmation, principal: Principal) -> str:
    """Make the change of a pending row once; the words the page shows. Only the request whose
    claim moved the row from ``pending`` runs the tool, so two workers never both make it."""
    server = deployment.mcp
    tool = server.tools.get(row.tool) if server is not None else None
    if server is None or tool is None or principal.user_id is None:
        return FAILED
    if not await confirmation_page.claim(deployment.sessions, row.id, principal.user_id, "applying"):
        again = await confirmation_page.find(deployment.sessions, row.id)
        if again is None:
            return UNKNOWN
        return _SETTLED.get(again.state, EXPIRED)
    try:
        context = server.request_context(principal, tool.plugin, None, {})
        args = server.validated(tool, json.loads(row.arguments))
        check_call(deployment.registry, principal, tool)
        assert tool.plan is not None  # only write tools wait here
        plan = await tool.plan(context, args)
        if plan is None:
            await confirmation_page.settle(deployment.sessions, row.id, "done")
            return NOTHING
        if not confirmation_page.matches(row, plan):
            await confirmation_page.settle(deployment.sessions, row.id, "stale")
            return STALE
        context = dataclasses.replace(context, confirmation="accepted", planned=plan)
        raw = await tool.handler(context, args)
        await server.finish(tool, context, raw)
    except CampusError as exc:
        await confirmation_page.settle(deployment.sessions, row.id, "failed")
        return f"{FAILED} ({exc.message})"
    except Exception:
        log.exception("the confirmed change of %s failed", row.tool)
        await confirmation_page.settle(deployment.sessions, row.id, "failed")
        return FAILED
    await confirmation_page.settle(deployment.sessions, row.id, "done")
    metrics.count_tool_call(tool.name, "confirmed_on_page")
    return "Done: the change was made. You can go back to your assistant; it can check that it was made."


class ConfirmationController(Controller):
    """``GET /confirm/{id}``: the question; ``POST``: Confirm or Cancel it, once."""

    path = PAGE_PATH

    def _page(self, deployment: Deployment, request: Request[Any, Any, Any], body: str) -> Response[str]:
        from campus_mcp.dashboard.chrome import dashboard_page

        return dashboard_page(deployment, request, TITLE, f"<h1>{TITLE}</h1>{body}")

    @get("/{pending_id:str}", opt=NO_PARITY, include_in_schema=False)
    async def show(
        self, request: Request[Any, Any, Any], deployment: NamedDependency[Deployment], pending_id: FromPath[str]
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(f"{PAGE_PATH}/{pending_id}")
        row = await _mine(deployment, pending_id, user[0])
        if row is None:
            return self._page(deployment, request, _notice(UNKNOWN, alert=True))
        if row.state != "pending":
            return self._page(deployment, request, _notice(_SETTLED.get(row.state, EXPIRED)))
        if confirmation_page.expired(row):
            return self._page(deployment, request, _notice(EXPIRED, alert=True))
        return self._page(deployment, request, _form(row, csrf_token(request)))

    @post("/{pending_id:str}", opt=NO_PARITY, include_in_schema=False, status_code=200)
    async def decide(
        self, request: Request[Any, Any, Any], deployment: NamedDependency[Deployment], pending_id: FromPath[str]
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(f"{PAGE_PATH}/{pending_id}")
        form = await request.form()
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return self._page(deployment, request, _notice(EXPIRED_FORM, alert=True))
        row = await _mine(deployment, pending_id, user[0])
        if row is None:
            return self._page(deployment, request, _notice(UNKNOWN, alert=True))
        if row.state == "pending" and confirmation_page.expired(row):
            return self._page(deployment, request, _notice(EXPIRED, alert=True))
        if form.get("decision") == "cancel":
            if await confirmation_page.claim(deployment.sessions, row.id, user[0], "cancelled"):
                return self._page(deployment, request, _notice(CANCELLED))
            again = await confirmation_page.find(deployment.sessions, row.id)
            return self._page(deployment, request, _notice(_SETTLED.get(again.state if again else "", EXPIRED)))
        if form.get("decision") != "confirm":
            return self._page(deployment, request, _notice(EXPIRED_FORM, alert=True))
        # The student in this browser, with every scope, as on the dashboard (oauth.session).
        principal = Principal(
            user_id=user[0], username=user[1], client_id=None, scopes=frozenset(deployment.registry.scopes)
        )
        return self._page(deployment, request, _notice(await apply(deployment, row, principal)))
