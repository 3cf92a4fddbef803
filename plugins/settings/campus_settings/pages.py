"""The Calendar settings and Notifications pages of the dashboard (issue 12, point 8).

Each change is a form post with the session's CSRF token, checked with the same parsing as the
tools (``parse_change``, ``check_level``) and saved with the same no-lost-update save; a refused
value re-renders the page with the reason. The page is the student's own confirmation, so it
asks no second question. The preview of a template is a second submit button of the same form
(the host's pages allow no scripts), which re-renders the page with the preview and saves nothing.
"""

from __future__ import annotations

from html import escape
from typing import Any

from campus_mcp import CSRF_FIELD, CampusError, csrf_ok, csrf_token, dashboard_page, hidden, session_user, to_login
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect
from pydantic import ValidationError

from campus_settings import service, store
from campus_settings.changes import parse_change
from campus_settings.class_pages import CLASSES_PAGE, classes_card, save_class
from campus_settings.colors import COLORS
from campus_settings.feed.connection import feed_card
from campus_settings.feed.tokens import feed_of
from campus_settings.levels import check_level
from campus_settings.meetings import first_meeting
from campus_settings.messages import campus_time
from campus_settings.resolver import class_meeting_event, load_student_settings
from campus_settings.schemas import LevelSettingsChange
from campus_settings.templates import TEMPLATE_FIELDS, VARIABLES, check_template
from campus_settings.tools import NOTIFICATIONS_PAGE, SETTINGS_PAGE

PAGE_OPT = {"exclude_from_parity": True}
NOTICES = {"saved": "Saved. Your calendar sync picks the change up.", "notifications": "Saved."}


def _alert(text: str) -> str:
    return f'<p class="error" role="alert">{escape(text)}</p>'


def _level_form(csrf: str, entry: Any, form: dict[str, str] | None) -> str:
    current = entry.settings
    values = form if form is not None and form.get("level") == entry.level else {}

    def value(field: str) -> str:
        if field in values:
            return values[field]
        stored_value = getattr(current, field, None) if current is not None else None
        if field == "reminders":
            return "" if stored_value is None else ", ".join(str(m) for m in stored_value)
        return "" if stored_value is None else str(stored_value)

    slug = escape(entry.level.replace(":", "-"))
    fields = "".join(
        f'<label for="{slug}-{f}">{label}</label>'
        f'<input type="text" id="{slug}-{f}" name="{f}" maxlength="1000" value="{escape(value(f))}">'
        for f, label in (
            ("title_template", "Title template"),
            ("description_template", "Description template"),
            ("location_template", "Location template"),
            ("color", "Color (a name, 1-11 or #rrggbb)"),
            ("reminders", "Reminders, minutes before (such as 10, 60; 'none' for no reminders)"),
        )
    )
    return (
        f'<section class="card" aria-labelledby="{slug}-title"><h2 id="{slug}-title">{escape(entry.label)}</h2>'
        f'<form method="post" action="{SETTINGS_PAGE}">{hidden(CSRF_FIELD, csrf)}{hidden("level", entry.level)}'
        f"{fields}"
        '<div class="actions"><button type="submit" name="action" value="save" class="primary">Save</button>'
        '<button type="submit" name="action" value="preview">Preview</button></div></form></section>'
    )


async def _render(
    request: Request[Any, Any, Any],
    deployment: Any,
    student: int,
    notice: str = "",
    form: dict[str, str] | None = None,
    preview: str = "",
    status: int = 200,
) -> Response[Any]:
    async with deployment.session() as session:
        answer = await service.my_calendar_settings(session, student, deployment.settings.timezone)
        feed = await feed_of(session, student)
    csrf = csrf_token(request)
    parts = ["<h1>Calendar settings</h1>", notice, preview]
    parts.append(
        "<p>Each field comes from the first level that sets it: the class meeting, its kind of class, all "
        "classes, then the defaults. Leave a field empty to use the level below.</p>"
    )
    parts.extend(_level_form(csrf, entry, form) for entry in answer.levels)
    async with deployment.session() as session:
        parts.append(await classes_card(session, student, deployment.settings, csrf, form))
    names = ", ".join(f"{{{{{name}}}}}" for name in VARIABLES)
    parts.append(
        f'<section class="card"><h2>Template names and colors</h2><p>{escape(names)}</p>'
        f"<p>{escape(', '.join(COLORS))}</p></section>"
    )
    parts.append(feed_card(feed))
    response = dashboard_page(deployment, request, "Calendar settings", "".join(parts))
    response.status_code = status
    return response


def _fields_from(form: dict[str, str]) -> dict[str, Any]:
    """A form's fields as the tools' arguments: an empty field is reset (the level below applies)."""
    raw: dict[str, Any] = {}
    reset: list[str] = []
    for field in (*TEMPLATE_FIELDS, "color"):
        text = form.get(field, "").strip()
        if text:
            raw[field] = text
        else:
            reset.append(field)
    reminders = form.get("reminders", "").strip().lower()
    if reminders in ("none", "0 reminders", "no reminders"):
        raw["reminders"] = []
    elif reminders:
        try:
            raw["reminders"] = [
                {"minutes": float(part)} for part in reminders.replace(";", ",").split(",") if part.strip()
            ]
        except ValueError as exc:
            raise CampusError("Give reminders as minutes separated by commas, such as 10, 60, or 'none'.") from exc
    else:
        reset.append("reminders")
    raw["reset"] = reset
    return raw


def _change_from(form: dict[str, str]) -> LevelSettingsChange:
    return LevelSettingsChange.model_validate({"level": form.get("level", ""), **_fields_from(form)})


@get(SETTINGS_PAGE, opt={**PAGE_OPT, "dashboard_nav": "Calendar settings"}, include_in_schema=False)
async def calendar_settings_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(SETTINGS_PAGE)
    notice = NOTICES.get(request.query_params.get("notice", ""), "")
    return await _render(request, deployment, user[0], f'<p role="status">{escape(notice)}</p>' if notice else "")


@post(SETTINGS_PAGE, opt=PAGE_OPT, include_in_schema=False, status_code=303)
async def save_calendar_settings(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(SETTINGS_PAGE)
    raw = await request.form()
    form = {key: str(raw.get(key) or "") for key in ("level", *TEMPLATE_FIELDS, "color", "reminders", "action")}
    if not csrf_ok(request, raw.get(CSRF_FIELD)):
        return await _render(
            request, deployment, user[0], _alert("The form expired. Reload the page and try again."), status=403
        )
    try:
        if form["action"] == "preview":
            return await _render(
                request, deployment, user[0], form=form, preview=await _preview(deployment, user[0], form)
            )
        args = _change_from(form)
        async with deployment.session() as session:
            level = await check_level(session, user[0], args.level)
        await store.save_level_setting(deployment.sessions, user[0], level, parse_change(args))
    except CampusError as exc:
        return await _render(request, deployment, user[0], _alert(exc.message), form=form, status=400)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        return await _render(request, deployment, user[0], _alert(f"{where}: {problem['msg']}"), form=form, status=400)
    return Redirect(f"{SETTINGS_PAGE}?notice=saved", status_code=303)


async def _preview(deployment: Any, student: int, form: dict[str, str]) -> str:
    templates = {f: check_template(f, form[f]) for f in TEMPLATE_FIELDS if form.get(f, "").strip()}  # type: ignore[arg-type]
    async with deployment.session() as session:
        found = await first_meeting(session, student, deployment.settings)
        bundle = await load_student_settings(session, student)
    if found is None:
        return '<p role="status">You have no class meetings on record, so there is nothing to preview.</p>'
    section, meeting = found
    resolved = bundle.resolve(class_meeting_event(section, meeting), templates=templates)
    return (
        f'<section class="card" aria-labelledby="preview-title"><h2 id="preview-title">Preview: {escape(section.course.code)}</h2>'
        f"<p>Title: <strong>{escape(resolved.title)}</strong></p>"
        f"<p>Description:<br>{escape(resolved.description).replace(chr(10), '<br>')}</p>"
        f"<p>Location: {escape(resolved.location)}</p><p class=muted>Nothing is saved until you select Save.</p></section>"
    )


async def _notifications(
    request: Request[Any, Any, Any], deployment: Any, student: int, notice: str, status: int = 200
) -> Response[Any]:
    async with deployment.session() as session:
        row = await store.notification_row(session, student)
    paused = bool(row and row.paused)
    state = "Your reminders are paused" if paused else "Your reminders are on"
    if paused and row is not None and row.paused_until is not None:
        state += f" until {campus_time(row.paused_until, deployment.settings.timezone)}"
    csrf = csrf_token(request)
    body = (
        f"<h1>Notification settings</h1>{notice}<p>{escape(state)}.</p>"
        f'<section class="card"><form method="post" action="{NOTIFICATIONS_PAGE}">{hidden(CSRF_FIELD, csrf)}'
        '<label for="minutes">Pause for (minutes, empty: until you turn them on)</label>'
        '<input type="number" id="minutes" name="minutes" min="1" step="1">'
        '<div class="actions"><button type="submit" name="paused" value="true" class="primary">Pause reminders</button>'
        '<button type="submit" name="paused" value="false">Turn reminders on</button></div></form></section>'
    )
    response = dashboard_page(deployment, request, "Notification settings", body)
    response.status_code = status
    return response


@get(NOTIFICATIONS_PAGE, opt={**PAGE_OPT, "dashboard_nav": "Notifications"}, include_in_schema=False)
async def notifications_page(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(NOTIFICATIONS_PAGE)
    notice = NOTICES.get(request.query_params.get("notice", ""), "")
    return await _notifications(
        request, deployment, user[0], f'<p role="status">{escape(notice)}</p>' if notice else ""
    )


@post(NOTIFICATIONS_PAGE, opt=PAGE_OPT, include_in_schema=False, status_code=303)
async def save_notifications(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    from campus_settings.schemas import NotificationsChange

    user = session_user(request)
    if user is None:
        return to_login(NOTIFICATIONS_PAGE)
    raw = await request.form()
    if not csrf_ok(request, raw.get(CSRF_FIELD)):
        return await _notifications(
            request, deployment, user[0], _alert("The form expired. Reload the page and try again."), 403
        )
    try:
        minutes = str(raw.get("minutes") or "").strip()
        paused = str(raw.get("paused") or "") == "true"
        args = NotificationsChange.model_validate(
            {"paused": paused, **({"minutes": minutes} if minutes and paused else {})}
        )
        on, until, _minutes = service._pause(args)
        await store.save_notifications(deployment.sessions, user[0], on, until)
    except CampusError as exc:
        return await _notifications(request, deployment, user[0], _alert(exc.message), 400)
    except ValidationError:
        return await _notifications(
            request, deployment, user[0], _alert("Give the pause in whole minutes, 1 or more."), 400
        )
    return Redirect(f"{NOTIFICATIONS_PAGE}?notice=notifications", status_code=303)


@post(CLASSES_PAGE, opt=PAGE_OPT, include_in_schema=False, status_code=303)
async def save_class_settings(request: Request[Any, Any, Any], deployment: NamedDependency[Any]) -> Response[Any]:
    user = session_user(request)
    if user is None:
        return to_login(SETTINGS_PAGE)
    raw = await request.form()
    form = {
        key: str(raw.get(key) or "") for key in ("meeting_time_id", *TEMPLATE_FIELDS, "color", "reminders", "action")
    }
    if not csrf_ok(request, raw.get(CSRF_FIELD)):
        return await _render(
            request, deployment, user[0], _alert("The form expired. Reload the page and try again."), status=403
        )
    try:
        fields = {} if form["action"] == "reset" else _fields_from(form)
        await save_class(deployment.sessions, user[0], form, fields)
    except CampusError as exc:
        return await _render(request, deployment, user[0], _alert(exc.message), form=form, status=exc.status)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        return await _render(request, deployment, user[0], _alert(f"{where}: {problem['msg']}"), form=form, status=400)
    return Redirect(f"{SETTINGS_PAGE}?notice=saved", status_code=303)


PAGES = [calendar_settings_page, save_calendar_settings, save_class_settings, notifications_page, save_notifications]
