"""The Seat watches page of the dashboard, and the page an e-mail's stop link opens.

``/dashboard/watches`` lists every watch of the signed-in student (all terms), its seats now, and
each e-mail of its openings: sent (when, to which masked address), waiting for another try (and
why), or given up. Nothing sent is hidden: a mail the SMTP server refused stays here with its reason.

``/dashboard/watches/stop?t=...`` needs no sign-in: the signed token (campus_schedule.watch_links)
stops that one watch. A GET shows what the button stops; only the POST (the button, or a mail
client's one-click) stops it, so a link scanner that opens every link stops nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from campus_catalog.api import Course, Section, Term
from campus_mcp import (
    CSRF_FIELD,
    campus_time_text,
    csrf_ok,
    csrf_token,
    dashboard_page,
    hidden,
    mask_address,
    session_user,
    to_login,
)
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import SeatMail, SeatWatch
from campus_schedule.seat_mail import MAX_ATTEMPTS
from campus_schedule.watch_links import STOP_PAGE, WATCHES_PAGE, token_matches, token_watch_id
from campus_schedule.watch_notice import address_of, how_told
from campus_schedule.watches import seat_open

PAGE_OPT = {"exclude_from_parity": True}


def _mail_line(mail: SeatMail, timezone: str) -> str:
    if mail.status == "sent" and mail.sent_at is not None:
        return (
            f"Opening {mail.opening}: e-mailed to {escape(mask_address(mail.sent_to or ''))} on "
            f"{escape(campus_time_text(mail.sent_at, timezone))}."
        )
    why = escape(mail.last_error or "")
    if mail.status == "failed":
        return f"<strong>Opening {mail.opening}: not e-mailed</strong>: {why}."
    if mail.attempts:
        return (
            f"Opening {mail.opening}: not sent yet (try {mail.attempts} of {MAX_ATTEMPTS}: {why}); tried again at "
            f"{escape(campus_time_text(mail.next_attempt_at, timezone))}."
        )
    return f"Opening {mail.opening}: being e-mailed now."


async def _rows(session: AsyncSession, student: int) -> list[tuple[SeatWatch, Section, Course, Term, list[SeatMail]]]:
    found = (
        await session.execute(
            select(SeatWatch, Section, Course, Term)
            .join(Section, Section.id == SeatWatch.section_id)
            .join(Course, Course.id == Section.course_id)
            .join(Term, Term.uid == SeatWatch.term_uid)
            .where(SeatWatch.student_id == student)
            .order_by(SeatWatch.term_uid, SeatWatch.crn)
        )
    ).all()
    mails: dict[int, list[SeatMail]] = {}
    for mail in await session.scalars(
        select(SeatMail).where(SeatMail.student_id == student).order_by(SeatMail.opening)
    ):
        mails.setdefault(mail.watch_id, []).append(mail)
    return [(watch, section, course, term, mails.get(watch.id, [])) for watch, section, course, term in found]


def _state(section: Section) -> str:
    if section.cancelled:
        return "Cancelled"
    if seat_open(section.cancelled, section.seats_available):
        seats = section.seats_available or 0
        return f"<strong>Seat open now</strong>: {seats} seat{'' if seats == 1 else 's'}. Register soon."
    return "Full"


def _body(
    rows: Sequence[tuple[SeatWatch, Section, Course, Term, list[SeatMail]]], told: str, csrf: str, tz: str
) -> str:
    if not rows:
        return (
            "<h1>Seat watches</h1><p>You watch no section. Ask your AI assistant to watch a full section "
            '("tell me when a seat opens in CRN 40213").</p>'
        )
    items = []
    for watch, section, course, term, mails in rows:
        sent = "".join(f"<li>{_mail_line(mail, tz)}</li>" for mail in mails) or "<li>No opening yet.</li>"
        code = f"{course.subject_code} {course.course_number}"
        items.append(
            f'<li class="card"><h2>{escape(code)} {escape(section.title or course.title)}</h2>'
            f"<p>CRN {escape(watch.crn)}, {escape(term.name)}: {_state(section)}</p>"
            f'<ul aria-label="E-mails of {escape(code)}">{sent}</ul>'
            f'<form method="post" action="{WATCHES_PAGE}/unwatch">{hidden(CSRF_FIELD, csrf)}{hidden("watch", str(watch.id))}'
            f'<button type="submit" aria-label="Stop watching {escape(code)} (CRN {escape(watch.crn)})">Stop watching'
            "</button></form></li>"
        )
    return f'<h1>Seat watches</h1><p role="note">{escape(told)}</p><ul class="plain">{"".join(items)}</ul>'


@get(WATCHES_PAGE, opt={**PAGE_OPT, "dashboard_nav": "Seat watches"}, include_in_schema=False)
async def watches_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(WATCHES_PAGE)
    async with deployment.session() as session:
        rows = await _rows(session, user[0])
        told = how_told(deployment.settings, deployment.registry.jobs, await address_of(session, user[0]))
    body = _body(rows, told, csrf_token(request), deployment.settings.timezone)
    return dashboard_page(deployment, request, "Seat watches", body)


@post(f"{WATCHES_PAGE}/unwatch", opt=PAGE_OPT, include_in_schema=False, status_code=303)
async def unwatch_from_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(WATCHES_PAGE)
    form = await request.form()
    if not csrf_ok(request, form.get(CSRF_FIELD)):
        page = dashboard_page(
            deployment, request, "Seat watches", '<p role="alert">The form expired. Reload the page and try again.</p>'
        )
        page.status_code = 403
        return page
    watch_id = str(form.get("watch") or "")
    if watch_id.isdigit():
        async with deployment.session() as session:
            watch = await session.get(SeatWatch, int(watch_id))
            if watch is not None and watch.student_id == user[0]:  # only the student's own
                await session.delete(watch)
                await session.commit()
    return Redirect(WATCHES_PAGE, status_code=303)


async def _watch_of(session: AsyncSession, settings: Any, token: str) -> tuple[SeatWatch, str] | None:
    """The watch this stop token stops, with its words (``CSCE 121 (CRN 12345, Fall 2026)``)."""
    watch_id = token_watch_id(token)
    found = (
        None
        if watch_id is None
        else (
            await session.execute(
                select(SeatWatch, Course.subject_code, Course.course_number, Term.name)
                .join(Section, Section.id == SeatWatch.section_id)
                .join(Course, Course.id == Section.course_id)
                .join(Term, Term.uid == SeatWatch.term_uid)
                .where(SeatWatch.id == watch_id)
            )
        ).first()
    )
    if found is None:
        return None
    watch, subject, number, term_name = found
    if not token_matches(settings, token, watch.id, watch.student_id, watch.created_at):
        return None
    return watch, f"{subject} {number} (CRN {watch.crn}, {term_name})"


NO_WATCH = (
    "<h1>Nothing to stop</h1><p>This link stops no watch: the watch was stopped already, or the link is not "
    f'whole (copy all of it from the e-mail). Your watches are on <a href="{WATCHES_PAGE}">Seat watches</a>.</p>'
)


@get(STOP_PAGE, opt=PAGE_OPT, include_in_schema=False)
async def stop_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    token = request.query_params.get("t") or ""
    async with deployment.session() as session:
        found = await _watch_of(session, deployment.settings, token)
    if found is None:
        page = dashboard_page(deployment, request, "Stop a seat watch", NO_WATCH)
        page.status_code = 404
        return page
    _watch, words = found
    body = (
        f"<h1>Stop watching {escape(words)}?</h1>"
        "<p>You will get no more e-mail about its seats. This does not change your registration.</p>"
        f'<form method="post" action="{STOP_PAGE}">{hidden("t", token)}'
        '<button type="submit">Stop watching</button></form>'
    )
    return dashboard_page(deployment, request, "Stop a seat watch", body)


@post(STOP_PAGE, opt=PAGE_OPT, include_in_schema=False, status_code=200)
async def stop_watch(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    # The token is the authority (no session: the student may read their mail on another device);
    # from the form (the page's button) or the query (a mail client's one-click POST to the link).
    form = await request.form()
    token = str(form.get("t") or request.query_params.get("t") or "")
    async with deployment.session() as session:
        found = await _watch_of(session, deployment.settings, token)
        if found is not None:
            await session.delete(found[0])
            await session.commit()
    if found is None:
        page = dashboard_page(deployment, request, "Stop a seat watch", NO_WATCH)
        page.status_code = 404
        return page
    body = (
        f"<h1>Stopped</h1><p>You no longer watch {escape(found[1])}; no more e-mail comes about it.</p>"
        f'<p><a href="{WATCHES_PAGE}">Your seat watches</a></p>'
    )
    return dashboard_page(deployment, request, "Seat watch stopped", body)


WATCH_PAGES = [watches_page, unwatch_from_page, stop_page, stop_watch]
