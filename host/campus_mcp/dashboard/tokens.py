"""The dashboard's Access tokens page: make a personal access token, see it once, revoke it.

The form offers the permissions of the enabled families as checkboxes (one that changes data
starts unchecked, as on the consent page; the always-on public ones are implied) and an expiry
from a short list. The token is shown once (post/redirect/get, ``campus_mcp.oauth.secret_once``):
the POST keeps it in the session and redirects to this page, which takes it out as it shows it, so
a reload makes no second token and shows it no more. It is never in a URL, the page is
``Cache-Control: no-store`` as every page, and its box has a Copy button. Live tokens are listed on this page and under
Connected apps in Settings, each with Disconnect, which revokes it.
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import urlencode

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.response import Redirect

from campus_mcp.assembly.access import TOKENS_PAGE, challenged_scopes, granted_scope
from campus_mcp.assembly.deployment import Deployment
from campus_mcp.assembly.registry import Registry
from campus_mcp.dashboard.chrome import dashboard_page, permissions
from campus_mcp.oauth.pages import ScopeChoice, hidden
from campus_mcp.oauth.personal_tokens import (
    DEFAULT_EXPIRY_DAYS,
    EXPIRY_DAYS,
    NAME_LIMIT,
    PersonalTokens,
    TokenInfo,
    TokenRefused,
)
from campus_mcp.oauth.secret_once import copy_box, keep_for_one_display, take_for_display
from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, to_login

TOKENS_PATH = TOKENS_PAGE
REVOKE_PATH = "/dashboard/tokens/revoke"
NO_PARITY = {"exclude_from_parity": True}
EXPIRED_FORM = "The form expired. Reload the page and try again."
MADE = "personal access token"


def provide_personal_tokens(state: State) -> PersonalTokens:
    """The deployment's store of personal access tokens (``app.state.personal_tokens``, set by ``create_app``)."""
    tokens: PersonalTokens = state.personal_tokens
    return tokens


PERSONAL_TOKEN_DEPENDENCIES = {"personal_tokens": Provide(provide_personal_tokens, sync_to_thread=False)}


def _scope_boxes(registry: Registry, checked: frozenset[str] | None = None) -> str:
    """One checkbox per permission of the enabled families; the always-on ones are named as implied."""
    boxes: list[str] = []
    implied: list[str] = []
    for scope in registry.scopes.values():
        if scope.reserved:
            continue  # no tool needs it yet: a token would hold it for nothing
        if scope.always_on:
            implied.append(f"{escape(scope.title)} <code>{escape(scope.name)}</code>")
            continue
        on = scope.name in checked if checked is not None else scope.starts_checked and not scope.writes
        choice = ScopeChoice.of(scope, on)
        box_id = f"pat-scope-{escape(scope.name)}"
        boxes.append(
            '<div class="scope">'
            f'<input type="checkbox" id="{box_id}" name="scope_choice" value="{escape(scope.name)}"'
            f'{" checked" if on else ""} aria-describedby="{box_id}-what">'
            f'<label for="{box_id}">{choice.heading()}</label>'
            f'<p class="what" id="{box_id}-what">{escape(scope.description)}</p></div>'
        )
    always = (
        f'<p class="always">Always included: {", ".join(implied)} <span class="public">public data</span></p>'
        if implied
        else ""
    )
    fieldset = "<fieldset><legend>Permissions of the token</legend>" + "".join(boxes) + "</fieldset>" if boxes else ""
    return always + fieldset


def _expiry_choices(chosen: int = DEFAULT_EXPIRY_DAYS) -> str:
    options = "".join(
        f'<option value="{days}"{" selected" if days == chosen else ""}>{days} days</option>' for days in EXPIRY_DAYS
    )
    return f'<label for="pat-expiry">Expires after</label><select id="pat-expiry" name="expiry_days">{options}</select>'


def token_item(registry: Registry, token: TokenInfo, csrf: str, back_to: str, last_read: str = "") -> str:
    """One live token with its permissions, dates and Disconnect (on this page and in Settings);
    ``last_read``: Settings' line saying when it last read the student's data."""
    used = f"{token.last_used_at:%Y-%m-%d %H:%M} UTC" if token.last_used_at else "never"
    return (
        '<div class="app">'
        f'<h3>{escape(token.name)} <span class="public">personal access token</span></h3>'
        f"{permissions(registry, token.scopes)}"
        f'<p class="muted">Created {token.created_at:%Y-%m-%d} · expires {token.expires_at:%Y-%m-%d} · '
        f"last used {used}</p>{last_read}"
        f'<form method="post" action="{REVOKE_PATH}">'
        f"{hidden(CSRF_FIELD, csrf)}{hidden('token_id', token.public_id)}{hidden('back_to', back_to)}"
        f'<button type="submit" aria-label="Disconnect {escape(token.name)}">Disconnect</button>'
        "</form></div>"
    )


def _form(
    registry: Registry,
    csrf: str,
    *,
    error: str = "",
    name: str = "",
    checked: frozenset[str] | None = None,
    days: int = DEFAULT_EXPIRY_DAYS,
) -> str:
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return (
        '<section class="card" aria-labelledby="new-token-title"><h2 id="new-token-title">New token</h2>'
        f"{alert}"
        f'<form method="post" action="{TOKENS_PATH}">{hidden(CSRF_FIELD, csrf)}'
        '<label for="pat-name">Name</label>'
        f'<input type="text" id="pat-name" name="name" required maxlength="{NAME_LIMIT}" value="{escape(name)}" '
        'aria-describedby="pat-name-what">'
        '<p class="muted" id="pat-name-what">What will use it, for example "Claude Desktop" or "my timetable script".</p>'
        f"{_scope_boxes(registry, checked)}{_expiry_choices(days)}"
        '<div class="actions"><button type="submit" class="primary">Create token</button></div></form></section>'
    )


class AccessTokensController(Controller):
    """``/dashboard/tokens``: the form, the token shown once, the live tokens; and revoking one."""

    path = "/"
    dependencies = PERSONAL_TOKEN_DEPENDENCIES

    async def _page(
        self,
        request: Request[Any, Any, Any],
        deployment: Deployment,
        tokens: PersonalTokens,
        user_id: int,
        *,
        made: str = "",
        form: str = "",
        notice: str = "",
    ) -> Response[str]:
        registry = deployment.registry
        csrf = csrf_token(request)
        shown = ""
        if made:
            shown = (
                '<section class="card" aria-labelledby="made-title"><h2 id="made-title">Your new token</h2>'
                '<p role="status">Copy it now: it is shown only this once. Keep it like a password.</p>'
                f"{copy_box('made-token', 'Token', made)}"
                "<p class=muted>Give it to <code>campus-mcp stdio</code> as <code>CAMPUS_MCP_TOKEN</code>, or send "
                "it as <code>Authorization: Bearer …</code> to the MCP endpoint and the REST API.</p></section>"
            )
        live = await tokens.live(user_id)
        items = "".join(token_item(registry, token, csrf, TOKENS_PATH) for token in live)
        listed = (
            '<section class="card" aria-labelledby="live-title"><h2 id="live-title">Your tokens</h2>'
            f"{notice}{items or '<p>You have no personal access token.</p>'}</section>"
        )
        body = (
            "<h1>Access tokens</h1>"
            "<p>A personal access token lets a script or a desktop app act for you with the permissions you "
            "check here, until it expires or you disconnect it.</p>"
            f"{shown}{form or _form(registry, csrf)}{listed}"
        )
        return dashboard_page(deployment, request, "Access tokens", body, copy_button=bool(made))

    @get(TOKENS_PATH, opt={**NO_PARITY, "dashboard_nav": "Access tokens"}, include_in_schema=False)
    async def tokens_page(
        self,
        request: Request[Any, Any, Any],
        deployment: NamedDependency[Deployment],
        personal_tokens: NamedDependency[PersonalTokens],
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(TOKENS_PATH)
        # The link names a token by its id; the notice names it only when it is this student's own
        # revoked token, so a link cannot put words of its own on the page (issue 30).
        revoked = await personal_tokens.revoked_name(user[0], request.query_params.get("disconnected") or "")
        notice = f'<p role="status">Disconnected {escape(revoked)}. It no longer works.</p>' if revoked else ""
        made = take_for_display(request, MADE) or ""
        return await self._page(request, deployment, personal_tokens, user[0], made=made, notice=notice)

    @post(TOKENS_PATH, opt=NO_PARITY, include_in_schema=False, status_code=303)
    async def create_token(
        self,
        request: Request[Any, Any, Any],
        deployment: NamedDependency[Deployment],
        personal_tokens: NamedDependency[PersonalTokens],
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(TOKENS_PATH)
        form = await request.form()
        registry = deployment.registry
        csrf = csrf_token(request)
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return await self._page(
                request, deployment, personal_tokens, user[0], form=_form(registry, csrf, error=EXPIRED_FORM)
            )
        name = str(form.get("name") or "")
        checked = frozenset(str(value) for value in form.getall("scope_choice", []))
        raw_days = str(form.get("expiry_days") or "")
        days = int(raw_days) if raw_days.isdigit() and len(raw_days) < 4 else 0
        offered = [name for name in challenged_scopes(registry) if not registry.scopes[name].always_on]
        # A box that was not offered (a forged form) grants nothing; the public scopes come with every token.
        _chosen, scope = granted_scope(registry, offered, checked)
        try:
            made = await personal_tokens.create(user[0], name=name, scope=scope, days=days)
        except TokenRefused as exc:
            again = _form(
                registry,
                csrf,
                error=str(exc),
                name=name[:NAME_LIMIT],
                checked=checked,
                days=days if days in EXPIRY_DAYS else DEFAULT_EXPIRY_DAYS,
            )
            return await self._page(request, deployment, personal_tokens, user[0], form=again)
        # Post/redirect/get: a reload of the page that shows the token does not post the form again.
        keep_for_one_display(request, MADE, made)
        return Redirect(TOKENS_PATH, status_code=303)

    @post(REVOKE_PATH, opt=NO_PARITY, include_in_schema=False, status_code=303)
    async def revoke_token(
        self,
        request: Request[Any, Any, Any],
        deployment: NamedDependency[Deployment],
        personal_tokens: NamedDependency[PersonalTokens],
    ) -> Response[Any]:
        user = session_user(request)
        if user is None:
            return to_login(TOKENS_PATH)
        form = await request.form()
        # Back to the page the button was on, and only to one of the two.
        back_to = "/dashboard/settings" if form.get("back_to") == "/dashboard/settings" else TOKENS_PATH
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return dashboard_page(deployment, request, "Access tokens", f'<p role="alert">{EXPIRED_FORM}</p>')
        token_id = str(form.get("token_id") or "")
        await personal_tokens.revoke(user[0], token_id)
        anchor = "#connected-apps" if back_to == "/dashboard/settings" else ""
        query = urlencode({"disconnected": token_id})
        return Redirect(f"{back_to}?{query}{anchor}", status_code=303)
