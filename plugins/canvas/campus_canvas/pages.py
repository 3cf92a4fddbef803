"""The student's Canvas page on the dashboard: connect, disconnect, and due work in the calendar feed.

Connecting is Canvas's OAuth2 flow, started by a form post (with the CSRF token) so no link of
another site can start it for the student: the post makes a one-time ``state``, keeps it in the
student's own browser session (the encrypted session cookie) with who asked and when, and sends the
browser to Canvas's ``/login/oauth2/auth``. Canvas sends it back to ``/dashboard/canvas/callback``
with a code and the state; the callback takes the state out of the session (used once), checks it
is the same value, the same signed-in student and less than ``STATE_MINUTES`` old, and only then
trades the code for tokens. A callback in another browser, for another student, replayed or late,
changes nothing. The notices after a redirect are fixed words chosen by a key, never text from the
request.

These are form posts and pages, not REST: no tool twin (``exclude_from_parity``).
"""

from __future__ import annotations

import secrets
import time
from html import escape
from typing import Any

from campus_mcp import (
    CSRF_FIELD,
    CampusError,
    csrf_ok,
    csrf_token,
    dashboard_page,
    hidden,
    session_user,
    to_login,
)
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect

from campus_canvas import oauth
from campus_canvas.connections import CALLBACK_PATH, CANVAS_PAGE, redirect_uri, save_connection
from campus_canvas.disconnect import end_connection
from campus_canvas.models import CanvasConnection
from campus_canvas.reader import open_client
from campus_canvas.settings import CanvasSettings, canvas_origin, is_demo

NO_PARITY = {"exclude_from_parity": True}
STATE_KEY = "canvas_oauth"
STATE_MINUTES = 10
NOTICES = {
    "connected": "Your Canvas account is connected. Your assistant can now answer what is due, what is missing, your grades and announcements.",
    "disconnected": "Your Canvas account is disconnected, and Canvas revoked this server's access.",
    "disconnected_unconfirmed": (
        "Your Canvas account is disconnected here, and its tokens are forgotten, but Canvas could not be told. "
        "In Canvas, open Account, Settings, and under Approved Integrations delete this app if it is still listed."
    ),
    "denied": "You did not allow access in Canvas, so nothing is connected.",
    "feed_on": "Your Canvas due dates will be in your calendar feed from its next refresh.",
    "feed_off": "Your Canvas due dates are no longer in your calendar feed.",
}
Req = Request[Any, Any, Any]


def _session(request: Req) -> dict[str, Any]:
    session = request.scope.get("session")
    return dict(session) if isinstance(session, dict) else {}


def _notice(request: Req) -> str:
    words = NOTICES.get(request.query_params.get("done") or "")
    return f'<p role="status">{escape(words)}</p>' if words else ""


def _button(action: str, csrf: str, label: str, *, primary: bool = False, extra: str = "") -> str:
    kind = ' class="primary"' if primary else ""
    return (
        f'<form method="post" action="{CANVAS_PAGE}/{action}">{hidden(CSRF_FIELD, csrf)}{extra}'
        f'<button type="submit"{kind}>{escape(label)}</button></form>'
    )


def _account_card(row: CanvasConnection | None, csrf: str, demo: bool, product: str) -> str:
    if row is None:
        where = (
            "This demo campus has a demo Canvas: connecting it takes you to no other site."
            if demo
            else "You sign in to Canvas and allow access; Canvas sends you back here."
        )
        state = (
            f"<p>Connect your Canvas account so your AI assistant can answer what is due, what you are missing, "
            f"your grades and your courses' announcements. {escape(product)} only reads; it never changes anything "
            f"in Canvas. {escape(where)}</p>"
        )
        actions = _button("connect", csrf, "Connect Canvas", primary=True)
    elif row.lost_at is not None:
        state = (
            f"<p>Your Canvas connection stopped working on {row.lost_at:%Y-%m-%d} (it was removed in Canvas, or "
            "Canvas no longer takes it). Connect again to go on.</p>"
        )
        actions = _button("connect", csrf, "Connect Canvas again", primary=True) + _button(
            "disconnect", csrf, "Forget it"
        )
    else:
        who = escape(row.canvas_user_name or "your Canvas account")
        state = (
            f"<p>Connected as {who} since {row.connected_at:%Y-%m-%d}. Your assistant reads your Canvas coursework "
            "with it, and nothing else; disconnect it here at any time.</p>"
        )
        actions = _button("disconnect", csrf, "Disconnect")
    return (
        '<section class="card" aria-labelledby="canvas-account"><h2 id="canvas-account">Your Canvas account</h2>'
        f'{state}<div class="actions">{actions}</div></section>'
    )


def _feed_card(row: CanvasConnection, csrf: str) -> str:
    checked = " checked" if row.feed_due_work else ""
    box = (
        f'<p><label><input type="checkbox" name="due_work" value="on"{checked}> Show my Canvas due dates in my '
        "calendar feed</label></p>"
    )
    return (
        '<section class="card" aria-labelledby="canvas-feed"><h2 id="canvas-feed">Due dates in your calendar</h2>'
        "<p>Off unless you turn it on. Your calendar feed (Calendar feed on the dashboard) then shows each "
        "assignment's due time from Canvas beside your classes and finals.</p>"
        f"{_button('feed', csrf, 'Save', extra=box)}</section>"
    )


async def _row(deployment: Any, student_id: int) -> CanvasConnection | None:
    async with deployment.session() as session:
        row: CanvasConnection | None = await session.get(CanvasConnection, student_id)
        if row is not None:
            session.expunge(row)
        return row


@get(CANVAS_PAGE, opt={**NO_PARITY, "dashboard_nav": "Canvas"}, include_in_schema=False)
async def canvas_page(
    request: Req, deployment: NamedDependency[Any], plugin_settings: NamedDependency[Any]
) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(CANVAS_PAGE)
    row = await _row(deployment, user[0])
    csrf = csrf_token(request)
    demo = is_demo(plugin_settings)
    body = "<h1>Canvas</h1>" + _notice(request) + _account_card(row, csrf, demo, deployment.settings.product_name)
    if row is not None and row.lost_at is None:
        body += _feed_card(row, csrf)
    # Connect's post redirects to Canvas's authorization page: browsers hold it to form-action.
    targets = () if demo else (canvas_origin(plugin_settings),)
    return dashboard_page(deployment, request, "Canvas", body, form_targets=targets)


def _problem(request: Req, deployment: Any, words: str, status: int = 400) -> Response[Any]:
    body = f'<h1>Canvas</h1><p role="alert">{escape(words)}</p><p><a href="{CANVAS_PAGE}">Back to Canvas</a></p>'
    response = dashboard_page(deployment, request, "Canvas", body)
    response.status_code = status
    return response


async def _checked_post(request: Req, deployment: Any) -> tuple[int, dict[str, Any]] | Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(CANVAS_PAGE)
    form = dict(await request.form())
    if not csrf_ok(request, form.get(CSRF_FIELD)):
        return _problem(request, deployment, "The form expired. Reload the page and try again.", 403)
    return user[0], form


async def _connected(deployment: Any, plugin_settings: CanvasSettings, student_id: int, code: str) -> Response[Any]:
    async with open_client(plugin_settings) as client:
        answer = await oauth.exchange_code(client, plugin_settings, code, redirect_uri(deployment.settings))
    async with deployment.session() as session:
        await save_connection(session, deployment.settings, student_id, answer, oauth.scopes_for(plugin_settings))
        await session.commit()
    return Redirect(f"{CANVAS_PAGE}?done=connected", status_code=303)


@post(f"{CANVAS_PAGE}/connect", opt=NO_PARITY, include_in_schema=False, status_code=303)
async def connect(
    request: Req, deployment: NamedDependency[Any], plugin_settings: NamedDependency[Any]
) -> Response[Any]:
    checked = await _checked_post(request, deployment)
    if isinstance(checked, Response):
        return checked
    student_id, _form = checked
    if is_demo(plugin_settings):
        # The demo Canvas answers inside the process: its code grant needs no trip through a browser.
        try:
            return await _connected(deployment, plugin_settings, student_id, "demo-code")
        except CampusError as exc:
            return _problem(request, deployment, exc.message, 502)
    state = secrets.token_urlsafe(32)
    request.set_session(_session(request) | {STATE_KEY: {"state": state, "student": student_id, "at": time.time()}})
    return Redirect(oauth.authorize_url(plugin_settings, redirect_uri(deployment.settings), state), status_code=303)


@get(CALLBACK_PATH, opt=NO_PARITY, include_in_schema=False)
async def callback(
    request: Req, deployment: NamedDependency[Any], plugin_settings: NamedDependency[Any]
) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(CANVAS_PAGE)
    data = _session(request)
    pending = data.pop(STATE_KEY, None)
    request.set_session(data)  # used once, whatever happens next
    state = request.query_params.get("state") or ""
    fresh = isinstance(pending, dict) and time.time() - float(pending.get("at", 0)) < STATE_MINUTES * 60
    if (
        not fresh
        or not isinstance(pending, dict)
        or pending.get("student") != user[0]
        or not secrets.compare_digest(str(pending.get("state", "")), state)
    ):
        return _problem(
            request,
            deployment,
            "This answer from Canvas does not match a connection you started in this browser in the last "
            f"{STATE_MINUTES} minutes, so nothing was connected. Start again from the Canvas page.",
        )
    if request.query_params.get("error"):
        return Redirect(f"{CANVAS_PAGE}?done=denied", status_code=303)
    code = request.query_params.get("code") or ""
    if not code or len(code) > 2000:
        return _problem(request, deployment, "Canvas sent no sign-in code back, so nothing was connected. Start again.")
    try:
        return await _connected(deployment, plugin_settings, user[0], code)
    except CampusError as exc:
        return _problem(request, deployment, exc.message, 502)


@post(f"{CANVAS_PAGE}/disconnect", opt=NO_PARITY, include_in_schema=False, status_code=303)
async def disconnect(
    request: Req, deployment: NamedDependency[Any], plugin_settings: NamedDependency[Any]
) -> Response[Any]:
    checked = await _checked_post(request, deployment)
    if isinstance(checked, Response):
        return checked
    student_id, _form = checked
    async with deployment.session() as session:
        ended = await end_connection(session, deployment.settings, plugin_settings, student_id)
        await session.commit()
    done = "disconnected" if ended.canvas_told else "disconnected_unconfirmed"
    return Redirect(f"{CANVAS_PAGE}?done={done}", status_code=303)


@post(f"{CANVAS_PAGE}/feed", opt=NO_PARITY, include_in_schema=False, status_code=303)
async def feed_choice(request: Req, deployment: NamedDependency[Any]) -> Response[Any]:
    checked = await _checked_post(request, deployment)
    if isinstance(checked, Response):
        return checked
    student_id, form = checked
    wanted = form.get("due_work") == "on"
    async with deployment.session() as session:
        row = await session.get(CanvasConnection, student_id)
        if row is None:
            return Redirect(CANVAS_PAGE, status_code=303)
        row.feed_due_work = wanted
        await session.commit()
    return Redirect(f"{CANVAS_PAGE}?done={'feed_on' if wanted else 'feed_off'}", status_code=303)


PAGES = [canvas_page, connect, callback, disconnect, feed_choice]
