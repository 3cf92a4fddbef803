"""The dashboard's chrome: the page frame every dashboard page shares, host's and plugins' alike.

``dashboard_page`` (public as ``campus_mcp.dashboard_page``) wraps a page's body in the frame with
its navigation (every route that carries the ``dashboard_nav`` opt); the small pieces the host's
pages share (an app's permissions in words, a connected thing, its last read) are here too, below
the pages that use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from litestar import Litestar, Request, Response
from litestar.routes import HTTPRoute

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.assembly.registry import Registry
from campus_mcp.oauth.pages import html_response, page
from campus_mcp.oauth.secret_once import COPY_SCRIPT_PATH
from campus_mcp.oauth.session import csrf_token, session_user, signed_in_name
from campus_mcp.oauth.store import ConnectedApp
from campus_mcp.students.connections import ConnectedThing

ACTIVITY_PAGE = "/dashboard/activity"


def when(at: datetime, zone: ZoneInfo) -> str:
    """A time as a student reads it: campus time, with its zone."""
    return at.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


NAV_OPT = "dashboard_nav"


def dashboard_nav(app: Litestar) -> list[tuple[str, str]]:
    """The shell's links: the host's own, then every page that asked to be listed.

    The finished app's routes are read, not the plugins' route groups: a group may hold a
    ``Controller`` class, whose ``opt`` is a class slot and whose handlers only exist once the
    app has registered it. A handler with several paths is listed once, by its first path; a
    path with parameters cannot be a link and is left out.
    """
    links = [("/dashboard", "Dashboard"), ("/dashboard/settings", "Settings")]
    listed: set[int] = set()
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or "{" in route.path:
            continue
        for handler in route.route_handlers:
            text = handler.opt.get(NAV_OPT)
            if isinstance(text, str) and "GET" in handler.http_methods and id(handler) not in listed:
                listed.add(id(handler))
                links.append((route.path, text))
    return links


def dashboard_page(
    deployment: Deployment,
    request: Request[Any, Any, Any],
    title: str,
    body: str,
    *,
    copy_button: bool = False,
    form_targets: Iterable[str] = (),
) -> Response[str]:
    """A page inside the dashboard shell, for plugins' own pages (the caller checks sign-in).

    ``copy_button``: the page shows a secret in a ``copy_box``, whose Copy button runs this
    server's own script (allowed on this page only). ``form_targets``: origins a form of the page
    continues to through its post's redirect (an OAuth authorization at the student's LMS), which
    browsers check against the page's ``form-action``; plain origins only, anything else is left out."""
    user = session_user(request)
    return html_response(
        page(
            title,
            body,
            product=deployment.settings.product_name,
            nav=dashboard_nav(request.app),
            current=request.url.path,
            signed_in_as=signed_in_name(request),
            csrf=csrf_token(request) if user else "",
            script=COPY_SCRIPT_PATH if copy_button else "",
        ),
        scripts=copy_button,
        form_targets=form_targets,
    )


def app_permissions(registry: Registry, app: ConnectedApp) -> str:
    """An app's permissions; for an app holding tokens with different permissions (one per
    `campus-mcp token` run), each token's own, since no single token holds them all."""
    if len(app.grants) <= 1:
        return permissions(registry, app.scopes)
    each = "".join(
        f"<li>Token {number}: {permissions(registry, grant)}</li>" for number, grant in enumerate(app.grants, 1)
    )
    return f'<p class="perms-title">{len(app.grants)} live tokens, each with its own permissions:</p><ul class="perms">{each}</ul>'


def permissions(registry: Registry, names: Sequence[str]) -> str:
    """An app's permissions in plain words, each code beside it (a retired code shows alone)."""
    if not names:
        return "<p>Permissions: none</p>"
    items = "".join(
        f"<li>{escape(scope.title)} <code>{escape(name)}</code></li>"
        if (scope := registry.scopes.get(name))
        else f"<li><code>{escape(name)}</code></li>"
        for name in names
    )
    return f'<p class="perms-title">Permissions:</p><ul class="perms">{items}</ul>'


def connection_item(found: ConnectedThing, last_read: str = "") -> str:
    """A plugin's connection beside the apps: its state and a link to the plugin's page that manages it."""
    title = escape(found.connection.title)
    if found.state is None:
        return f'<div class="app"><h3>{title}</h3><p>Its state cannot be read right now. Try again later.</p></div>'
    if not found.state.connected:
        return (
            f'<div class="app"><h3>{title}</h3><p>{escape(found.state.summary)}</p>'
            f'<p><a href="{escape(found.state.manage_url)}" aria-label="Connect {title}">Connect</a></p></div>'
        )
    return (
        f'<div class="app"><h3>{title}</h3><p>{escape(found.state.summary)}</p>{last_read}'
        f'<p><a href="{escape(found.state.manage_url)}" aria-label="Manage {title}">Manage</a></p></div>'
    )


def last_read_line(reads: Mapping[tuple[str, str], datetime], key: tuple[str, str], zone: ZoneInfo) -> str:
    """When an app last read or changed the student's data (the access log), as Connected apps shows it."""
    at = reads.get(key)
    text = f"Last read your data {when(at, zone)}" if at else "Has not read your data lately"
    return f'<p class="muted last-read">{escape(text)} · <a href="{ACTIVITY_PAGE}">Recent activity</a></p>'
