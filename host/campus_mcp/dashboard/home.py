"""The host's own web pages: the home page and the dashboard shell with Settings.

The dashboard is for a signed-in student (the session cookie, see ``oauth/session.py``); a
visitor who is not signed in is sent to the login form and back. Settings has the
**Connected apps** card (seed 000 "Disconnect an app"): every app that holds a live token of
the student, with the permissions it holds, and **Disconnect**, which revokes all its tokens.

Plugins add their own pages to this shell: a plugin route handler with
``opt={"dashboard_nav": "<link text>"}`` appears in the dashboard navigation, and
:func:`dashboard_page` wraps a page body in the shell.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from litestar import Controller, MediaType, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.base.settings import Settings
from campus_mcp.dashboard.activity import ActivityController
from campus_mcp.dashboard.chrome import (
    ACTIVITY_PAGE,
    app_permissions,
    connection_item,
    dashboard_page,
    last_read_line,
    when,
)
from campus_mcp.dashboard.confirmation_routes import ConfirmationController
from campus_mcp.dashboard.tokens import PERSONAL_TOKEN_DEPENDENCIES, AccessTokensController, token_item
from campus_mcp.mcp.instructions import topics
from campus_mcp.oauth.pages import hidden, html_response, page
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.oauth.routes import OAUTH_DEPENDENCIES
from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, signed_in_name, to_login
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.students.access_log import last_reads
from campus_mcp.students.connections import connections_of

NO_PARITY = {"exclude_from_parity": True}
DASHBOARD_DEPENDENCIES = {**OAUTH_DEPENDENCIES, **PERSONAL_TOKEN_DEPENDENCIES}


async def _last_reads(deployment: Deployment, student_id: int) -> dict[tuple[str, str], datetime]:
    if deployment.access_log is not None:
        await deployment.access_log.write_pending()  # this process's latest calls too
    async with deployment.session(read_only=True) as session:
        return await last_reads(session, student_id)


class HomeController(Controller):
    """The home page: what this server is and the connector URL to give an assistant."""

    path = "/"

    @get("/", media_type=MediaType.HTML, opt=NO_PARITY, include_in_schema=False)
    async def home(self, settings: NamedDependency[Settings], deployment: NamedDependency[Deployment]) -> Response[str]:
        title = f"{settings.product_name} for {settings.campus_name}"
        # The same topics serverInfo names: only what an enabled plugin offers a tool or prompt for.
        covered = ", ".join(topics(deployment.registry)) or "nothing yet (no plugin is enabled)"
        body = (
            f"<h1>{escape(title)}</h1>"
            f'<p class="lead">Connect your AI assistant to your campus: {escape(covered)}.</p>'
            "<p>Add this server to your assistant as a connector:</p>"
            f'<code class="url">{escape(settings.mcp_url)}</code>'
            "<p>It signs you in with your campus account and asks which permissions to give it.</p>"
            '<p><a href="/dashboard">Open your dashboard</a> to see and disconnect the apps you connected.</p>'
        )
        return html_response(page(title, body, product=settings.product_name))


class DashboardController(Controller):
    """The signed-in student's dashboard and Settings, with Connected apps and Disconnect."""

    path = "/"
    dependencies = DASHBOARD_DEPENDENCIES

    @get("/dashboard", opt=NO_PARITY, include_in_schema=False)
    async def dashboard(
        self,
        request: Request[Any, Any, Any],
        deployment: NamedDependency[Deployment],
        store: NamedDependency[OAuthStore],
        personal_tokens: NamedDependency[PersonalTokens],
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login("/dashboard")
        # Apps, personal access tokens and the plugins' connections (a calendar feed) alike: each
        # can read the student's data, and each says when it last did (the access log).
        reads = await _last_reads(deployment, user[0])
        zone = ZoneInfo(deployment.settings.timezone)
        holders = [(app.client_name, ("oauth", app.client_id)) for app in await store.connected_apps(user[0])]
        holders += [(token.name, ("token", token.public_id)) for token in await personal_tokens.live(user[0])]
        holders += [
            (found.connection.title, ("feed", found.connection.access_log_id))
            for found in await connections_of(deployment, user[0])
            if found.reads
        ]
        count = "No app" if not holders else "1 app" if len(holders) == 1 else f"{len(holders)} apps"
        listed = "".join(
            f"<li>{escape(name)}: "
            + (f"last read your data {escape(when(reads[key], zone))}" if key in reads else "no reads lately")
            + "</li>"
            for name, key in holders
        )
        body = (
            f"<h1>Welcome, {escape(signed_in_name(request))}</h1>"
            '<section class="card" aria-labelledby="apps-title"><h2 id="apps-title">Connected apps</h2>'
            f"<p>{count} can use your {escape(deployment.settings.campus_short_name)} data.</p>"
            + (f'<ul class="last-reads">{listed}</ul>' if listed else "")
            + '<p><a href="/dashboard/settings#connected-apps">See and disconnect them in Settings</a></p>'
            f'<p><a href="{ACTIVITY_PAGE}">Recent activity</a>: what each app read or changed, and when.</p></section>'
        )
        return dashboard_page(deployment, request, "Dashboard", body)

    @get("/dashboard/settings", opt=NO_PARITY, include_in_schema=False)
    async def settings_page(
        self,
        request: Request[Any, Any, Any],
        deployment: NamedDependency[Deployment],
        store: NamedDependency[OAuthStore],
        personal_tokens: NamedDependency[PersonalTokens],
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login("/dashboard/settings")
        # The link carries an app's or a token's id; the notice names it only when it is one this
        # student disconnected, so a link cannot put words of its own on the page (issue 30).
        gone = request.query_params.get("disconnected") or ""
        disconnected = gone and (
            await store.disconnected_name(user[0], gone) or await personal_tokens.revoked_name(user[0], gone)
        )
        apps = await store.connected_apps(user[0])
        reads = await _last_reads(deployment, user[0])
        zone = ZoneInfo(deployment.settings.timezone)
        csrf = csrf_token(request)
        notice = (
            f'<p role="status">Disconnected {escape(disconnected)}. It can no longer use your data.</p>'
            if disconnected
            else ""
        )
        items = "".join(
            '<div class="app">'
            f"<h3>{escape(app.client_name)}</h3>"
            f"{app_permissions(deployment.registry, app)}"
            f'<p class="muted">Connected since {app.since:%Y-%m-%d}</p>'
            f"{last_read_line(reads, ('oauth', app.client_id), zone)}"
            '<form method="post" action="/dashboard/settings/disconnect">'
            f"{hidden(CSRF_FIELD, csrf)}{hidden('client_id', app.client_id)}"
            f'<button type="submit" aria-label="Disconnect {escape(app.client_name)}">Disconnect</button>'
            "</form></div>"
            for app in apps
        )
        items += "".join(
            token_item(
                deployment.registry,
                token,
                csrf,
                "/dashboard/settings",
                last_read_line(reads, ("token", token.public_id), zone),
            )
            for token in await personal_tokens.live(user[0])
        )
        others = await connections_of(deployment, user[0])
        items += "".join(
            connection_item(
                found,
                last_read_line(reads, ("feed", found.connection.access_log_id), zone)
                if found.connection.access_log_id
                else "",
            )
            for found in others
            if found.reads
        )
        # The student's accounts elsewhere (their LMS), connected or to connect: after what can read their data.
        offers = "".join(connection_item(found) for found in others if not found.reads)
        card = (
            '<section class="card" id="connected-apps" aria-labelledby="connected-apps-title">'
            '<h2 id="connected-apps-title">Connected apps</h2>'
            f"{notice}"
            + (items or "<p>No app can use your data right now.</p>")
            + offers
            + "<p class=muted>To change an app's permissions, disconnect it, then connect it again "
            "and check the boxes you want.</p></section>"
        )
        return dashboard_page(deployment, request, "Settings", "<h1>Settings</h1>" + card)

    @post("/dashboard/settings/disconnect", opt=NO_PARITY, include_in_schema=False, status_code=303)
    async def disconnect(
        self,
        request: Request[Any, Any, Any],
        deployment: NamedDependency[Deployment],
        store: NamedDependency[OAuthStore],
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login("/dashboard/settings")
        form = await request.form()
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return dashboard_page(
                deployment, request, "Settings", '<p role="alert">The form expired. Reload Settings and try again.</p>'
            )
        client_id = str(form.get("client_id") or "")
        await store.disconnect(user[0], client_id)
        return Redirect(
            "/dashboard/settings?" + urlencode({"disconnected": client_id}) + "#connected-apps", status_code=303
        )


HOST_CONTROLLERS: tuple[type[Controller], ...] = (
    HomeController,
    DashboardController,
    AccessTokensController,
    ActivityController,
    ConfirmationController,
)
