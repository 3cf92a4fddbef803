"""The Friends pages of the dashboard: the friends list with requests and meetings, and a
friend's week of busy times.

Every change is a form post with the session's CSRF token, answered with a redirect to Friends
and a fixed notice (never text from the request). The pages are for the signed-in student only,
through the browser session; they are not REST routes, so the parity rule leaves them out
(``exclude_from_parity``) until the write tools come with issue 12. A friend's page shows the
same stripped busy times as ``friend_busy_times``, and the same not-found page for a student
who is not a friend, a removed friend and an id nobody has.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import date, datetime, time, timedelta
from html import escape
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from campus_mcp import (
    CSRF_FIELD,
    Deployment,
    InvalidInput,
    NotFound,
    csrf_ok,
    csrf_token,
    dashboard_page,
    hidden,
    session_user,
    to_login,
)
from campus_schedule.busy import within_calendar
from campus_schedule.events import create_event, delete_event, events_between, meeting_title
from litestar import MediaType, Request, Response, get, post
from litestar.params import FromPath
from litestar.response import Redirect
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends import busy, friendships, queries
from campus_friends.codes import friend_code, shown
from campus_friends.friendships import possible_id
from campus_friends.schemas import FriendBusyQuery, FriendList
from campus_friends.tools import FRIENDS_PAGE, friend_page

PAGE = {"exclude_from_parity": True}
NOT_A_FRIEND = (
    "This student is not one of your friends. Only a friend who accepted your request shows their busy times here."
)
# How far ahead the Friends page lists the student's meetings.
MEETINGS_AHEAD = timedelta(days=60)

NOTICES = {
    "sent": "Request sent if that friend code (or username) belongs to a student: they see it on their Friends page.",
    "accepted-back": "They had already asked you: you are now friends.",
    "accepted": "Request accepted: you are now friends.",
    "declined": "Request declined.",
    "withdrawn": "Request withdrawn.",
    "removed": "Friend removed. They no longer see your busy times, and you no longer see theirs.",
    "meeting": "Meeting added. It shows in your busy times and in your invited friends'.",
    "meeting-deleted": "Meeting deleted.",
}


def _deployment(request: Request[Any, Any, Any]) -> Deployment:
    deployment: Deployment = request.app.state.deployment
    return deployment


def _form(action: str, csrf: str, button: str, *, label: str = "", fields: str = "", primary: bool = False) -> str:
    aria = f' aria-label="{escape(label)}"' if label else ""
    css = ' class="primary"' if primary else ""
    return (
        f'<form method="post" action="{escape(action)}">{hidden(CSRF_FIELD, csrf)}{fields}'
        f'<button type="submit"{css}{aria}>{escape(button)}</button></form>'
    )


def _who(name: str, username: str | None) -> str:
    """A student's heading: their name, and a local account's username beside it (a campus
    account's username is its campus id: never shown)."""
    return escape(name) + (f' <span class="scope-code">{escape(username)}</span>' if username else "")


def _friends_body(friends: FriendList, code: str, meetings: str, csrf: str, notice: str, error: str) -> str:
    parts = ["<h1>Friends</h1>"]
    if notice:
        parts.append(f'<p role="status">{escape(notice)}</p>')
    if error:
        parts.append(f'<p class="error" role="alert">{escape(error)}</p>')
    rows = "".join(
        '<div class="app">'
        f"<h3>{_who(f.display_name.untrusted_text, f.username)}</h3>"
        f'<p><a href="{friend_page(f.friend_id)}">Busy times this week</a></p>'
        + _form(f"{friend_page(f.friend_id)}/remove", csrf, "Remove", label=f"Remove {f.display_name.untrusted_text}")
        + "</div>"
        for f in friends.friends
    )
    parts.append(
        '<section class="card" aria-labelledby="friends-title"><h2 id="friends-title">My friends</h2>'
        + (rows or "<p>No friends yet. Add one below with the friend code they give you.</p>")
        + "</section>"
    )
    received = "".join(
        '<div class="app">'
        f"<h3>{_who(r.display_name.untrusted_text, r.username)}</h3>"
        '<div class="actions">'
        + _form(
            f"{FRIENDS_PAGE}/requests/{r.request_id}/accept",
            csrf,
            "Accept",
            label=f"Accept {r.display_name.untrusted_text}",
            primary=True,
        )
        + _form(
            f"{FRIENDS_PAGE}/requests/{r.request_id}/decline",
            csrf,
            "Decline",
            label=f"Decline {r.display_name.untrusted_text}",
        )
        + "</div></div>"
        for r in friends.requests_received
    )
    if received:
        parts.append(
            '<section class="card" aria-labelledby="received-title">'
            f'<h2 id="received-title">Asked to be your friend</h2>{received}</section>'
        )
    sent = "".join(
        '<div class="app">'
        f"<h3>{_who(r.display_name.untrusted_text, r.username)}</h3>"
        '<p class="muted">Waiting for their answer.</p>'
        + _form(
            f"{FRIENDS_PAGE}/requests/{r.request_id}/decline",
            csrf,
            "Withdraw",
            label=f"Withdraw the request to {r.display_name.untrusted_text}",
        )
        + "</div>"
        for r in friends.requests_sent
    )
    if sent:
        parts.append(
            f'<section class="card" aria-labelledby="sent-title"><h2 id="sent-title">Requests you sent</h2>{sent}</section>'
        )
    parts.append(
        '<section class="card" aria-labelledby="add-title"><h2 id="add-title">Add a friend</h2>'
        f'<p>Your friend code: <strong class="friend-code">{escape(code)}</strong>. Give it to the friends '
        "you choose: they type it here to ask you. Nobody else finds you, and nobody sees your student "
        "number.</p>"
        f'<form method="post" action="{FRIENDS_PAGE}/requests">{hidden(CSRF_FIELD, csrf)}'
        '<label for="friend">Their friend code</label>'
        '<input type="text" id="friend" name="friend" required maxlength="150" autocomplete="off">'
        '<button type="submit" class="primary">Send request</button></form>'
        "<p class=muted>They see your request on their Friends page. Once they accept, each of you can see "
        "when the other is busy, never which classes.</p></section>"
    )
    if friends.friends:
        boxes = "".join(
            f'<div class="scope"><input type="checkbox" id="invite-{f.friend_id}" name="invite" value="{f.friend_id}">'
            f'<label for="invite-{f.friend_id}">{escape(f.display_name.untrusted_text)}</label></div>'
            for f in friends.friends
        )
        parts.append(
            '<section class="card" aria-labelledby="meet-title"><h2 id="meet-title">Plan a meeting</h2>'
            f'<form method="post" action="{FRIENDS_PAGE}/meetings">{hidden(CSRF_FIELD, csrf)}'
            '<label for="title">Title</label><input type="text" id="title" name="title" required maxlength="200">'
            '<label for="day">Day</label><input type="date" id="day" name="day" required>'
            '<label for="start">Starts</label><input type="time" id="start" name="start" required>'
            '<label for="end">Ends</label><input type="time" id="end" name="end" required>'
            f"<fieldset><legend>Invite</legend>{boxes}</fieldset>"
            '<button type="submit" class="primary">Add meeting</button></form></section>'
        )
    parts.append(meetings)
    return "".join(parts)


async def _meetings_card(deployment: Deployment, student_id: int, csrf: str) -> str:
    zone = ZoneInfo(deployment.settings.timezone)
    now = datetime.now(zone)
    async with deployment.session() as session:
        events = await events_between(session, student_id, now, now + MEETINGS_AHEAD)
    if not events:
        return ""
    items = []
    for event in events:
        start, end = event.starts_at.astimezone(zone), event.ends_at.astimezone(zone)
        when = f"{start:%a %b} {start.day}, {start:%H:%M}–{end:%H:%M}"
        action = (
            _form(f"{FRIENDS_PAGE}/meetings/{event.id}/delete", csrf, "Delete", label=f"Delete {meeting_title(event)}")
            if event.owner_id == student_id
            else '<p class="muted">A friend invited you.</p>'
        )
        items.append(f'<div class="app"><h3>{escape(meeting_title(event))}</h3><p>{escape(when)}</p>{action}</div>')
    return (
        '<section class="card" aria-labelledby="meetings-title"><h2 id="meetings-title">Your meetings</h2>'
        + "".join(items)
        + "</section>"
    )


async def _friends_page(request: Request[Any, Any, Any], *, error: str = "", status: int = 200) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(FRIENDS_PAGE)
    deployment = _deployment(request)
    async with deployment.session() as session:
        friends = await queries.list_friends(session, user[0], deployment.settings.timezone)
        code = shown(await friend_code(session, user[0]))
        await session.commit()  # a code made on this first visit
    csrf = csrf_token(request)
    notice = NOTICES.get(request.query_params.get("done") or "", "")
    meetings = await _meetings_card(deployment, user[0], csrf)
    body = _friends_body(friends, code, meetings, csrf, "" if error else notice, error)
    response = dashboard_page(deployment, request, "Friends", body)
    response.status_code = status
    return response


def _done(what: str) -> Redirect:
    return Redirect(f"{FRIENDS_PAGE}?{urlencode({'done': what})}", status_code=303)


async def _posted(request: Request[Any, Any, Any]) -> tuple[int, Mapping[str, Any]] | Response[Any]:
    """The signed-in student and the form, or the response for a visitor or an expired form."""
    user = session_user(request)
    if user is None:
        return to_login(FRIENDS_PAGE)
    form = await request.form()
    if not csrf_ok(request, form.get(CSRF_FIELD)):
        return await _friends_page(request, error="The form expired. Try again from this page.", status=403)
    return user[0], form


@get(FRIENDS_PAGE, opt=PAGE | {"dashboard_nav": "Friends"}, media_type=MediaType.HTML, include_in_schema=False)
async def friends_page(request: Request[Any, Any, Any]) -> Response[Any]:
    return await _friends_page(request)


FormChange = Callable[[AsyncSession, int, Mapping[str, Any]], Awaitable[str]]


async def _act(request: Request[Any, Any, Any], change: FormChange) -> Response[Any]:
    """One form post: the signed-in student's checked form, ``change`` in one transaction, then
    back to Friends with its notice; an ``InvalidInput`` re-renders the page with its words."""
    posted = await _posted(request)
    if isinstance(posted, Response):
        return posted
    student_id, form = posted
    try:
        async with _deployment(request).session() as session, session.begin():
            done = await change(session, student_id, form)
    except InvalidInput as exc:
        return await _friends_page(request, error=str(exc), status=400)
    return _done(done)


@post(f"{FRIENDS_PAGE}/requests", opt=PAGE, include_in_schema=False, status_code=303)
async def send_request(request: Request[Any, Any, Any]) -> Response[Any]:
    async def change(session: AsyncSession, student_id: int, form: Mapping[str, Any]) -> str:
        outcome = await friendships.send_request(session, student_id, str(form.get("friend") or ""))
        return "accepted-back" if outcome.accepted else "sent"

    return await _act(request, change)


@post(f"{FRIENDS_PAGE}/requests/{{request_id:int}}/accept", opt=PAGE, include_in_schema=False, status_code=303)
async def accept_request(request: Request[Any, Any, Any], request_id: FromPath[int]) -> Response[Any]:
    async def change(session: AsyncSession, student_id: int, _form: Mapping[str, Any]) -> str:
        await friendships.accept_request(session, student_id, request_id)
        return "accepted"

    return await _act(request, change)


@post(f"{FRIENDS_PAGE}/requests/{{request_id:int}}/decline", opt=PAGE, include_in_schema=False, status_code=303)
async def decline_request(request: Request[Any, Any, Any], request_id: FromPath[int]) -> Response[Any]:
    async def change(session: AsyncSession, student_id: int, _form: Mapping[str, Any]) -> str:
        # The same form declines a request received and withdraws one sent: say which it was.
        return "withdrawn" if await friendships.decline_request(session, student_id, request_id) else "declined"

    return await _act(request, change)


@post(f"{FRIENDS_PAGE}/{{friend_id:int}}/remove", opt=PAGE, include_in_schema=False, status_code=303)
async def remove_friend(request: Request[Any, Any, Any], friend_id: FromPath[int]) -> Response[Any]:
    async def change(session: AsyncSession, student_id: int, _form: Mapping[str, Any]) -> str:
        if not await friendships.remove_friend(session, student_id, friend_id):
            raise InvalidInput("That student is not one of your friends any more.")
        return "removed"

    return await _act(request, change)


def _meeting_times(form: Mapping[str, Any], zone: ZoneInfo) -> tuple[datetime, datetime]:
    try:
        day = date.fromisoformat(str(form.get("day") or ""))
    except ValueError:
        raise InvalidInput("Pick the day of the meeting (YYYY-MM-DD).", field="day") from None
    times: list[datetime] = []
    for field, word in (("start", "start"), ("end", "end")):
        try:
            clock = time.fromisoformat(str(form.get(field) or ""))
        except ValueError:
            raise InvalidInput(f"Give the {word} time of the meeting as HH:MM.", field=field) from None
        times.append(datetime.combine(day, clock.replace(second=0, microsecond=0), tzinfo=zone))
    return times[0], times[1]


@post(f"{FRIENDS_PAGE}/meetings", opt=PAGE, include_in_schema=False, status_code=303)
async def add_meeting(request: Request[Any, Any, Any]) -> Response[Any]:
    posted = await _posted(request)
    if isinstance(posted, Response):
        return posted
    student_id, form = posted
    deployment = _deployment(request)
    try:
        start, end = _meeting_times(form, ZoneInfo(deployment.settings.timezone))
        raw = form.getall("invite") if hasattr(form, "getall") else []
        try:
            invited = {int(value) for value in raw}
        except ValueError:
            raise InvalidInput("Pick the friends to invite from the list.", field="invite") from None
        async with deployment.session() as session, session.begin():
            # Only accepted friends can be invited: a meeting puts busy time in their schedule.
            if not invited or not invited <= await friendships.friend_ids(session, student_id):
                raise InvalidInput("Invite at least one of your friends from the list.", field="invite")
            await create_event(
                session,
                owner_id=student_id,
                title=str(form.get("title") or ""),
                start=start,
                end=end,
                attendee_ids=sorted(invited),
            )
    except InvalidInput as exc:
        return await _friends_page(request, error=str(exc), status=400)
    return _done("meeting")


@post(f"{FRIENDS_PAGE}/meetings/{{event_id:int}}/delete", opt=PAGE, include_in_schema=False, status_code=303)
async def delete_meeting(request: Request[Any, Any, Any], event_id: FromPath[int]) -> Response[Any]:
    async def change(session: AsyncSession, student_id: int, _form: Mapping[str, Any]) -> str:
        if not (possible_id(event_id) and await delete_event(session, owner_id=student_id, event_id=event_id)):
            raise InvalidInput("That meeting is not one of yours to delete.")
        return "meeting-deleted"

    return await _act(request, change)


def _week_of(raw: str | None, today: date) -> date:
    """The Monday of ``week_start``'s week. Raises ValueError (with the words to show when it is
    a CampusError) for a day that is not one, or outside the calendar's range."""
    day = date.fromisoformat(raw) if raw else today
    within_calendar(day, "week_start")
    monday = day - timedelta(days=day.weekday())
    within_calendar(monday + timedelta(days=6), "week_start's Sunday")
    return monday


@get(f"{FRIENDS_PAGE}/{{friend_id:int}}", opt=PAGE, media_type=MediaType.HTML, include_in_schema=False)
async def friend_week(request: Request[Any, Any, Any], friend_id: FromPath[int]) -> Response[Any]:
    user = session_user(request)
    path = friend_page(friend_id)
    if user is None:
        return to_login(path)
    deployment = _deployment(request)
    zone = ZoneInfo(deployment.settings.timezone)
    try:
        monday = _week_of(request.query_params.get("week_start"), datetime.now(zone).date())
    except (ValueError, InvalidInput) as exc:
        words = (
            exc.message
            if isinstance(exc, InvalidInput)
            else "week_start must be a day as YYYY-MM-DD, for example 2026-12-07."
        )
        response = dashboard_page(deployment, request, "Friend", f'<p class="error" role="alert">{escape(words)}</p>')
        response.status_code = 400
        return response
    query = FriendBusyQuery(friend_id=friend_id, start_date=monday, end_date=monday + timedelta(days=6))
    async with deployment.session() as session:
        try:
            week = await busy.friend_busy_times(session, user[0], query, deployment.settings)
        except NotFound:
            week = None
        names = await queries.list_friends(session, user[0], deployment.settings.timezone)
    if week is None:
        # The same page for a student who is not a friend, a removed friend and an id nobody has.
        response = dashboard_page(
            deployment,
            request,
            "Friend",
            f'<h1>Friend</h1><p class="error" role="alert">{NOT_A_FRIEND}</p>'
            f'<p><a href="{FRIENDS_PAGE}">Back to Friends</a></p>',
        )
        response.status_code = 404
        return response
    name = next((f.display_name.untrusted_text for f in names.friends if f.friend_id == friend_id), "Friend")
    days = []
    for offset in range(7):
        day = monday + timedelta(days=offset)
        blocks = [b for b in week.busy if b.start.astimezone(zone).date() == day]
        text = (
            "".join(f"<li>{b.start.astimezone(zone):%H:%M}–{b.end.astimezone(zone):%H:%M}</li>" for b in blocks)
            if blocks
            else '<li class="muted">Free all day</li>'
        )
        days.append(f"<h3>{day:%A %B} {day.day}</h3><ul>{text}</ul>")
    before = (monday - timedelta(days=7)).isoformat()
    after = (monday + timedelta(days=7)).isoformat()
    body = (
        f"<h1>{escape(name)}: busy times</h1>"
        f'<p class="muted">The week of {monday:%B} {monday.day}, {monday.year}, {escape(deployment.settings.timezone)} time. '
        "Busy times only: no class, room or meeting details.</p>"
        f'<section class="card" aria-label="Busy times">{"".join(days)}</section>'
        f'<p class="actions"><a href="{path}?week_start={before}">Previous week</a>'
        f'<a href="{path}?week_start={after}">Next week</a><a href="{FRIENDS_PAGE}">Back to Friends</a></p>'
    )
    return dashboard_page(deployment, request, f"{name}: busy times", body)


PAGES = [
    friends_page,
    send_request,
    accept_request,
    decline_request,
    remove_friend,
    add_meeting,
    delete_meeting,
    friend_week,
]
