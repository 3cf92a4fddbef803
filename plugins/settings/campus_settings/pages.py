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
from campus_settings.levels import check_level, own_class_kinds
from campus_settings.meetings import first_meeting
from campus_settings.messages import campus_time
from campus_settings.resolver import ALL_CLASSES, FINAL_EXAM, UNIVERSITY, class_meeting_event, load_student_settings
from campus_settings.schemas import LevelSettingsChange
from campus_settings.templates import TEMPLATE_FIELDS, VARIABLES, check_template
from campus_settings.tools import NOTIFICATIONS_PAGE, SETTINGS_PAGE

PAGE_OPT = {"exclude_from_parity": True}
NOTICES = {"saved": "Saved. Your calendar sync picks the change up.", "notifications": "Saved."}


def _alert(text: str) -> str:
    return f'<p class="error" role="alert">{escape(text)}</p>'


LEVEL_FIELDS = (
    ("title_template", "Title template"),
    ("description_template", "Description template"),
    ("location_template", "Location template"),
    ("color", "Color (a name, 1-11 or #rrggbb)"),
    ("reminders", "Reminders, minutes before (such as 10, 60; 'none' for no reminders)"),
)


def swatch(hex_color: str) -> str:
    """A color square: an SVG's fill attribute, which the pages' style-src 'self' allows (a style
    attribute it would not)."""
    return (
        '<svg class="swatch" width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false">'
        f'<rect width="16" height="16" rx="3" fill="{escape(hex_color)}"/></svg>'
    )


def _color_hex(value: str) -> str | None:
    text = value.strip().lower()
    if text in COLORS:
        return COLORS[text][1]
    return text if len(text) == 7 and text.startswith("#") else None


def _variables_aside(slug: str) -> str:
    """The template names, beside the template fields (each one's meaning in its tooltip and in
    the text a screen reader reads)."""
    names = "".join(
        f'<li><code title="{escape(text)}">{{{{{escape(name)}}}}}</code></li>' for name, text in VARIABLES.items()
    )
    return (
        f'<aside class="vars" id="{slug}-vars" aria-label="Names a template can use">'
        f'<p class="muted">Names a template can use:</p><ul>{names}</ul></aside>'
    )


def _color_choices(slug: str) -> str:
    items = "".join(
        f"<li>{swatch(hexa)} {escape(name)} <span class=muted>{color_id}</span></li>"
        for name, (color_id, hexa) in COLORS.items()
    )
    return f'<ul class="swatches" id="{slug}-colors" aria-label="Colors">{items}</ul>'


def _sets(entry: Any) -> str:
    """What a level sets, in a few words, for its folded heading."""
    current = entry.settings
    said = []
    for field, label in (
        ("title_template", "title"),
        ("description_template", "description"),
        ("location_template", "location"),
    ):
        if current is not None and getattr(current, field, None):
            said.append(label)
    color = getattr(current, "color", None) if current is not None else None
    if color:
        hexa = _color_hex(str(color))
        said.append(f"{swatch(hexa) if hexa else ''} color {escape(str(color))}")
    reminders = getattr(current, "reminders", None) if current is not None else None
    if reminders is not None:
        said.append("reminders " + (escape(", ".join(str(m) for m in reminders)) or "none"))
    return "Sets " + ", ".join(said) if said else "Sets nothing: the level below applies"


def _level_form(csrf: str, entry: Any, form: dict[str, str] | None, *, open_: bool = False) -> str:
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

    def field(f: str, label: str, described: str = "") -> str:
        hint = f' aria-describedby="{described}"' if described else ""
        return (
            f'<label for="{slug}-{f}">{label}</label>'
            f'<input type="text" id="{slug}-{f}" name="{f}" maxlength="1000" value="{escape(value(f))}"{hint}>'
        )

    templates = "".join(field(f, label, f"{slug}-vars") for f, label in LEVEL_FIELDS[:3])
    hexa = _color_hex(value("color"))
    color = field(*LEVEL_FIELDS[3], f"{slug}-colors").replace(
        "</label>", f" {swatch(hexa)}</label>" if hexa else "</label>", 1
    )
    opened = open_ or bool(values)
    return (
        f'<details class="card level"{" open" if opened else ""} aria-labelledby="{slug}-title">'
        f'<summary><h2 id="{slug}-title">{escape(entry.label)}</h2> <span class="muted">{_sets(entry)}</span></summary>'
        f'<form method="post" action="{SETTINGS_PAGE}">{hidden(CSRF_FIELD, csrf)}{hidden("level", entry.level)}'
        f'<div class="templated"><div>{templates}</div>{_variables_aside(slug)}</div>'
        f"{color}{_color_choices(slug)}{field(*LEVEL_FIELDS[4])}"
        '<div class="actions"><button type="submit" name="action" value="save" class="primary">Save</button>'
        '<button type="submit" name="action" value="preview">Preview</button></div></form></details>'
    )


def _level_forms(csrf: str, levels: list[Any], own_kinds: list[str], form: dict[str, str] | None) -> str:
    """All classes, the kinds of class the student has, exams and university events, and any level
    with settings: one folded form each (All classes open). The other kinds of class every campus
    has are folded together under one heading."""
    shown, folded = [], []
    for entry in levels:
        kind = entry.level not in (ALL_CLASSES, FINAL_EXAM) and not entry.level.startswith(UNIVERSITY)
        if kind and entry.level not in own_kinds and entry.settings is None:
            folded.append(entry)
        else:
            shown.append(entry)
    parts = [_level_form(csrf, entry, form, open_=entry.level == ALL_CLASSES) for entry in shown]
    if folded:
        names = ", ".join(entry.label.lower() for entry in folded)
        refused_here = form is not None and form.get("level") in {entry.level for entry in folded}
        parts.append(
            f'<details class="card other-kinds"{" open" if refused_here else ""}><summary><h2>Other kinds of class</h2> '
            f'<span class="muted">You have none: {escape(names)}</span></summary>'
            + "".join(_level_form(csrf, entry, form) for entry in folded)
            + "</details>"
        )
    return "".join(parts)


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
        own_kinds = await own_class_kinds(session, student)
    csrf = csrf_token(request)
    parts = ["<h1>Calendar settings</h1>", notice, preview]
    parts.append(
        "<p>Each field comes from the first level that sets it: the class meeting, its kind of class, all "
        "classes, then the defaults. Leave a field empty to use the level below.</p>"
    )
    parts.append(_level_forms(csrf, list(answer.levels), own_kinds, form))
    async with deployment.session() as session:
        parts.append(await classes_card(session, student, deployment.settings, csrf, form))
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
    resolved = bundle.resolve(class_meeting_event(found), templates=templates)
    return (
        f'<section class="card" aria-labelledby="preview-title"><h2 id="preview-title">Preview: {escape(found.course_code)}</h2>'
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
        pause = service.pause_of(args, deployment.settings.timezone)
        await store.save_notifications(deployment.sessions, user[0], pause.paused, pause.until)
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
