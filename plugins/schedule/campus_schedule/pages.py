"""The My schedule pages of the dashboard: one term at a time, and the onboarding page.

A student adds sections by CRN and removes them; a bad CRN gets the sentence that says which and
why, and nothing changes; a time conflict is shown, not refused. A student with no course is
sent to the onboarding page (seed 000 "Page links": the onboarded rule). Every form carries the
session's CSRF token, and a post without the right one changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from campus_catalog.api import DatedTerm, Term, all_terms, campus_today, choose_term, current_and_future, resolve_term
from campus_mcp import CSRF_FIELD, CampusError, csrf_ok, csrf_token, dashboard_page, hidden, session_user, to_login
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect

from campus_schedule import queries
from campus_schedule.enrollment import enrolled_sections, set_term_sections, student_terms
from campus_schedule.schemas import MyCourses, TermSectionsUpdate, WatchedSection
from campus_schedule.tools import ONBOARDING_PAGE, SCHEDULE_PAGE

PAGE_OPT = {"exclude_from_parity": True}


def _meetings(course: Any) -> str:
    parts = []
    for m in course.meetings:
        # A time range is one unit to read: never "1:00 PM–" on one line and "4:50 PM" on the next.
        when = (
            f'{escape(m.day_name)} <span class="nowrap">{escape(f"{m.start_12h}–{m.end_12h}")}</span>'
            if m.day_name and m.start_12h
            else "No fixed time"
        )
        where = " ".join(p for p in (m.building, m.room) if p)
        parts.append(when + (f", {escape(where)}" if where else ""))
    return "<br>".join(parts) or "No meetings listed"


def _add_form(csrf: str, terms: Sequence[DatedTerm], chosen: DatedTerm | None) -> str:
    options = "".join(
        f'<option value="{escape(t.uid)}"{" selected" if chosen is not None and t.uid == chosen.uid else ""}>'
        f"{escape(t.name)}</option>"
        for t in terms
    )
    return (
        f'<form method="post" action="{SCHEDULE_PAGE}/add" class="card">'
        f"{hidden(CSRF_FIELD, csrf)}"
        f'<label>Term <select name="term">{options}</select></label> '
        '<label>CRN <input name="crn" inputmode="numeric" pattern="[0-9]{4,6}" required size="6"></label> '
        '<button type="submit">Add section</button></form>'
    )


def _schedule_body(
    answer: MyCourses,
    listed: Sequence[DatedTerm],
    addable: Sequence[DatedTerm],
    chosen: DatedTerm,
    csrf: str,
    notice: str,
) -> str:
    tabs = " ".join(
        f'<a href="{SCHEDULE_PAGE}?{urlencode({"term": t.uid})}"'
        f"{' aria-current=page' if t.uid == chosen.uid else ''}>{escape(t.name)}</a>"
        for t in listed
    )
    rows = "".join(
        "<tr>"
        f'<td data-label="CRN">{escape(c.crn)}</td><td data-label="Course">{escape(c.course_code)}<br>{escape(c.title)}</td>'
        f'<td data-label="Meets">{_meetings(c)}</td>'
        f'<td data-label="Instructor">{escape(", ".join(c.instructors) or "Not listed")}</td>'
        f'<td><form method="post" action="{SCHEDULE_PAGE}/remove">{hidden(CSRF_FIELD, csrf)}'
        f"{hidden('term', chosen.uid)}{hidden('crn', c.crn)}"
        f'<button type="submit" aria-label="Remove {escape(c.course_code)} (CRN {escape(c.crn)})">Remove</button>'
        "</form></td></tr>"
        for c in answer.courses
    )
    conflicts = "".join(
        f'<li role="note">{escape(x.first.course_code)} (CRN {escape(x.first.crn)}) and '
        f"{escape(x.second.course_code)} (CRN {escape(x.second.crn)}) overlap on {escape(x.days)}, "
        f"{escape(x.overlap_start)}–{escape(x.overlap_end)} ({x.overlap_minutes} minutes). "
        f"Registering for both needs a {escape(x.override)} override.</li>"
        for x in answer.conflicts
    )
    table = (
        "<table><thead><tr><th>CRN</th><th>Course</th><th>Meets</th><th>Instructor</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if rows
        else f"<p>No courses in {escape(chosen.name)} yet.</p>"
    )
    return (
        f"<h1>My schedule: {escape(chosen.name)}</h1>"
        f"{notice}"
        + (f'<nav aria-label="Terms">{tabs}</nav>' if tabs else "")
        + _watches(answer)
        + f'<section class="card">{table}</section>'
        + (f'<section class="card"><h2>Time conflicts</h2><ul>{conflicts}</ul></section>' if conflicts else "")
        + "<h2>Add a section</h2>"
        + _add_form(csrf, addable, chosen)
    )


def _watch_state(watch: WatchedSection) -> str:
    if watch.cancelled:
        return "Cancelled"
    if watch.seat_open:
        seats = watch.seats_available or 0
        return f"<strong>Seat open now</strong>: {seats} seat{'' if seats == 1 else 's'}. Register soon."
    waitlist = "" if watch.waitlist_available is None else f", {max(watch.waitlist_available, 0)} waitlist places"
    return f"Full{escape(waitlist)}"


def _watches(answer: MyCourses) -> str:
    """The term's seat watches (watch_section), a seat that opened first: the news of a watch."""
    if not answer.seat_watches:
        return ""
    ordered = sorted(answer.seat_watches, key=lambda w: (not w.seat_open, w.course_code, w.crn))
    items = "".join(
        f"<li>{escape(w.course_code)} {escape(w.title)} (CRN {escape(w.crn)}): {_watch_state(w)}</li>" for w in ordered
    )
    opened = any(w.seat_open for w in answer.seat_watches)
    return f'<section class="card" aria-label="Seat watches"{" role=status" if opened else ""}><h2>Seat watches</h2><ul>{items}</ul></section>'


async def _addable_terms(session: Any, settings: Any) -> list[Term]:
    terms = current_and_future(await all_terms(session), campus_today(settings.timezone))
    return sorted(terms, key=lambda t: t.start_date)


def _alert(text: str) -> str:
    return f'<p role="alert">{escape(text)}</p>' if text else ""


async def _render(
    request: Request[Any, Any, Any], deployment: Any, student: int, term: str | None, notice: str, status: int = 200
) -> Response[Any]:
    async with deployment.session() as session:
        terms = await student_terms(session, student)
        if not any(t.enrolled for t in terms):
            if status == 200:
                return Redirect(ONBOARDING_PAGE, status_code=303)
            return await _onboarding(request, deployment, notice, status)
        listed = queries.schedule_page_terms(terms, deployment.settings)
        addable = await _addable_terms(session, deployment.settings)
        chosen: DatedTerm | None
        try:
            chosen = choose_term(terms, term, deployment.settings) if term else None
        except CampusError as exc:
            chosen, notice = None, _alert(exc.message)
        if chosen is None:
            # The term every tool answers for when none is named (the current term, else the next),
            # where the student has courses in it; else the first term the page lists.
            default = choose_term(terms, None, deployment.settings)
            chosen = next((t for t in listed if t.uid == default.uid), listed[0])
        answer = await queries.term_courses(session, student, chosen, terms, timezone=deployment.settings.timezone)
    body = _schedule_body(answer, listed, addable or [chosen], chosen, csrf_token(request), notice)
    response = dashboard_page(deployment, request, "My schedule", body)
    response.status_code = status
    return response


async def _onboarding(
    request: Request[Any, Any, Any], deployment: Any, notice: str = "", status: int = 200
) -> Response[Any]:
    async with deployment.session() as session:
        addable = await _addable_terms(session, deployment.settings)
    body = (
        "<h1>Add your courses</h1>"
        f"{notice}"
        f"<p>{escape(deployment.settings.product_name)} does not know your courses yet. Add each section you "
        "take by its CRN (the 5-digit course reference number on your registration); your AI assistant can "
        "then answer 'what are my classes?', 'when are my finals?' and 'when am I free?'.</p>"
        + (
            _add_form(csrf_token(request), addable, addable[0] if addable else None)
            if addable
            else "<p>No term is open yet.</p>"
        )
    )
    response = dashboard_page(deployment, request, "Add your courses", body)
    response.status_code = status
    return response


@get(SCHEDULE_PAGE, opt={**PAGE_OPT, "dashboard_nav": "My schedule"}, include_in_schema=False)
async def schedule_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    return await _render(request, deployment, user[0], request.query_params.get("term"), "")


@get(ONBOARDING_PAGE, opt=PAGE_OPT, include_in_schema=False)
async def onboarding_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(ONBOARDING_PAGE)
    return await _onboarding(request, deployment)


async def _change(request: Request[Any, Any, Any], deployment: Any, adding: bool) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(SCHEDULE_PAGE)
    form = await request.form()
    term_value = str(form.get("term") or "")
    if not csrf_ok(request, form.get(CSRF_FIELD)):
        return await _render(
            request, deployment, user[0], term_value, _alert("The form expired. Reload the page and try again."), 403
        )
    crn = str(form.get("crn") or "").strip()
    try:
        async with deployment.session() as session:
            term = await resolve_term(session, term_value or None, deployment.settings)
            current = [s.crn for s in await enrolled_sections(session, user[0], term.uid)]
            wanted = [*current, crn] if adding else [c for c in current if c != crn]
            update = TermSectionsUpdate.model_validate({"crns": wanted})
            await set_term_sections(session, user[0], term, update.crns)
    except CampusError as exc:
        return await _render(request, deployment, user[0], term_value, _alert(exc.message), 400)
    except ValueError:
        message = f"{crn!r} is not a CRN. A CRN is the 5-digit number of a section, for example 21345."
        return await _render(request, deployment, user[0], term_value, _alert(message), 400)
    return Redirect(f"{SCHEDULE_PAGE}?{urlencode({'term': term.uid})}", status_code=303)


@post(f"{SCHEDULE_PAGE}/add", opt=PAGE_OPT, include_in_schema=False, status_code=303)
async def add_section(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    return await _change(request, deployment, adding=True)


@post(f"{SCHEDULE_PAGE}/remove", opt=PAGE_OPT, include_in_schema=False, status_code=303)
async def remove_section(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    return await _change(request, deployment, adding=False)


PAGES = [schedule_page, onboarding_page, add_section, remove_section]
