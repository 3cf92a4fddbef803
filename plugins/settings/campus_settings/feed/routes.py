"""The feed's door and the student's feed card.

``GET /calendar/<token>.ics`` is a calendar app's door, not a student's API: it has no tool twin
(``exclude_from_parity``), takes no session or bearer token (the secret in the URL is the
credential, as with every subscribable calendar), and answers the same 404 for a wrong, an old
and a malformed token. ``ETag`` is a digest of the body, so ``If-None-Match`` answers 304 and a
calendar app re-reads cheaply; ``Last-Modified`` is the newest change the feed shows.

``/dashboard/calendar-feed`` shows whether the feed is on and turns it on, regenerates it or turns
it off. The new URL is shown once (only its hash is kept): the post keeps it in the session and
redirects to the page, which takes it out as it shows it with a Copy button, so a reload neither
regenerates the feed (the address just copied would answer 404) nor shows it again.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from email.utils import format_datetime
from html import escape
from typing import Any

from campus_mcp import (
    CSRF_FIELD,
    calendar_events_for,
    copy_box,
    csrf_ok,
    csrf_token,
    dashboard_page,
    hidden,
    keep_for_one_display,
    session_user,
    take_for_display,
    to_login,
    utcnow,
)
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Redirect

from campus_settings.feed import tokens
from campus_settings.feed.ics import build_feed

FEED_PREFIX = "/calendar"
FEED_PAGE = "/dashboard/calendar-feed"
FEED_APP_ID = "calendar-feed"  # the feed's name in the access log of student data
SHOWN_ONCE = "calendar feed address"
NO_PARITY = {"exclude_from_parity": True}
NOT_FOUND = (
    "No calendar feed at this address. It was turned off or regenerated; copy the current address "
    "from Calendar feed in your dashboard."
)
# Events other families add (register_calendar_events): from a while back to a term ahead.
ADDED_BACK = timedelta(days=30)
ADDED_AHEAD = timedelta(days=180)
# The token is the credential: no cache or referrer may keep it, and no page embeds the feed.
FEED_HEADERS = {"Cache-Control": "private, no-cache", "Referrer-Policy": "no-referrer"}


def feed_url(base_url: str, token: str) -> str:
    return f"{base_url}{FEED_PREFIX}/{token}.ics"


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    # Weak comparison (RFC 9110 13.1.2): W/"x" matches "x".
    return etag in {part.strip().removeprefix("W/") for part in header.split(",")}


@get(f"{FEED_PREFIX}/{{name:str}}", opt=NO_PARITY, include_in_schema=False)
async def calendar_feed(
    request: Request[Any, Any, Any], name: FromPath[str], deployment: NamedDependency[Any]
) -> Response[Any]:
    token = name.removesuffix(".ics") if name.endswith(".ics") else ""
    async with deployment.session() as session:
        feed = await tokens.student_of(session, token)
    if feed is None:
        return Response(NOT_FOUND, status_code=404, media_type="text/plain; charset=utf-8", headers=FEED_HEADERS)
    # Other families' events (due work from the student's LMS), each source in its own session and
    # time: read before the feed's own session opens, so a slow source holds no connection of it.
    now = utcnow()
    added = await calendar_events_for(deployment, feed.student_id, now - ADDED_BACK, now + ADDED_AHEAD)
    async with deployment.session() as session:
        built = await build_feed(session, feed.student_id, deployment.settings, feed.created_at, added)
    etag = _etag(built.body)
    headers = FEED_HEADERS | {"ETag": etag, "Last-Modified": format_datetime(built.last_modified, usegmt=True)}
    unchanged = _matches(request.headers.get("if-none-match"), etag)
    # The student's Recent activity and the privacy office's audit name the feed as the app.
    deployment.record_student_access(
        feed.student_id,
        app_kind="feed",
        app_id=FEED_APP_ID,
        door=f"GET {FEED_PREFIX}/<feed>.ics",
        action="calendar_feed",
        outcome="unchanged" if unchanged else "ok",
    )
    if unchanged:
        return Response(b"", status_code=304, headers=headers)
    # Litestar adds "; charset=utf-8" to a text/ media type itself: naming it here gave it twice.
    return Response(built.body, media_type="text/calendar", headers=headers)


def _card(csrf: str, on_since: str | None, new_url: str | None) -> str:
    if new_url is not None:
        state = (
            "<p role=status>Your calendar feed is on. Subscribe to this address in your calendar app "
            "(Google Calendar: Other calendars, From URL; Apple Calendar: File, New Calendar Subscription; "
            "Outlook: Add calendar, Subscribe from web). It is shown only now: keep it secret, like a password.</p>"
            f"{copy_box('feed-url', 'Feed address', new_url)}"
        )
    elif on_since is not None:
        state = (
            f"<p>Your calendar feed is on since {escape(on_since)}. Its address was shown when you made it; "
            "Regenerate gives a new one and the old one stops at once.</p>"
        )
    else:
        state = (
            "<p>Your calendar feed is off. Turn it on to see your classes, finals and meetings in any calendar app.</p>"
        )
    on = on_since is not None or new_url is not None
    buttons = (
        f'<form method="post" action="{FEED_PAGE}/regenerate">{hidden(CSRF_FIELD, csrf)}'
        f'<button type="submit" class="primary">{"Regenerate" if on else "Turn on"}</button></form>'
    )
    if on:
        buttons += (
            f'<form method="post" action="{FEED_PAGE}/off">{hidden(CSRF_FIELD, csrf)}'
            '<button type="submit">Turn off</button></form>'
        )
    return (
        '<section class="card" aria-labelledby="feed-title"><h2 id="feed-title">Calendar feed</h2>'
        f'{state}<div class="actions">{buttons}</div></section>'
    )


async def _page(
    request: Request[Any, Any, Any], deployment: Any, student: int, new_url: str | None = None
) -> Response[Any]:
    async with deployment.session() as session:
        feed = await tokens.feed_of(session, student)
    since = f"{feed.created_at:%Y-%m-%d}" if feed is not None else None
    body = "<h1>Calendar feed</h1>" + _card(csrf_token(request), since, new_url)
    response = dashboard_page(deployment, request, "Calendar feed", body, copy_button=new_url is not None)
    response.headers["Cache-Control"] = "no-store"  # the page may hold the secret address
    return response


@get(FEED_PAGE, opt={**NO_PARITY, "dashboard_nav": "Calendar feed"}, include_in_schema=False)
async def feed_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(FEED_PAGE)
    return await _page(request, deployment, user[0], new_url=take_for_display(request, SHOWN_ONCE))


def _expired(request: Request[Any, Any, Any], deployment: Any) -> Response[Any]:
    response = dashboard_page(
        deployment, request, "Calendar feed", '<p role="alert">The form expired. Reload the page and try again.</p>'
    )
    response.status_code = 403
    return response


@post(f"{FEED_PAGE}/regenerate", opt=NO_PARITY, include_in_schema=False, status_code=303)
async def regenerate_feed(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(FEED_PAGE)
    if not csrf_ok(request, (await request.form()).get(CSRF_FIELD)):
        return _expired(request, deployment)
    async with deployment.session() as session:
        token = await tokens.issue(session, user[0])
        await session.commit()
    keep_for_one_display(request, SHOWN_ONCE, feed_url(deployment.settings.base_url, token))
    return Redirect(FEED_PAGE, status_code=303)


@post(f"{FEED_PAGE}/off", opt=NO_PARITY, include_in_schema=False, status_code=303)
async def turn_off_feed(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(FEED_PAGE)
    if not csrf_ok(request, (await request.form()).get(CSRF_FIELD)):
        return _expired(request, deployment)
    async with deployment.session() as session:
        await tokens.turn_off(session, user[0])
        await session.commit()
    return Redirect(FEED_PAGE, status_code=303)


FEED_ROUTES = [calendar_feed, feed_page, regenerate_feed, turn_off_feed]
