"""Signing in and out: the local login form (rate-limited per account and per address) and OpenID Connect.

Failed sign-ins are counted in the database (so every web worker sees the same counts), per
account and per address, each with its own threshold (``login_limit``): one student's typos, or
one attacker, on a campus NAT lock out the account guessed at, not everyone behind the address.
The address is the client's (``client_address``: X-Forwarded-For from a trusted proxy), as for
every other limit. An attempt is counted before its password is checked, so a parallel burst gets
no more checks than the limit. With ``CAMPUS_MCP_LOCAL_ACCOUNTS=false`` the form is gone and a
password post is refused: students sign in through the campus identity provider only.
Passwords are never logged, echoed or kept.

Sign-out takes the session's CSRF token: it ends every session of the student, so a page of
another site (or an injected form) must not be able to post it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.response import Redirect

from campus_mcp.accounts import authenticate
from campus_mcp.limits.policy import client_address, trusted_proxies
from campus_mcp.oauth.app_return import access_denied_return
from campus_mcp.oauth.asking_app import asking_for
from campus_mcp.oauth.cas import cas_configured
from campus_mcp.oauth.login_limit import SOFT_PHASE_DELAY_SECONDS, LoginLimit, Verdict
from campus_mcp.oauth.oidc import OidcClient, OidcError, OidcRefused
from campus_mcp.oauth.pages import html_response, login_body, page, sign_in_refused
from campus_mcp.oauth.routes import OAUTH_DEPENDENCIES
from campus_mcp.oauth.server import OAuthService
from campus_mcp.oauth.session import (
    CSRF_FIELD,
    csrf_ok,
    csrf_token,
    safe_next,
    session_data,
    session_user,
    sign_in,
    sign_out,
    signed_in_name,
)
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.settings import Settings

NO_PARITY = {"exclude_from_parity": True}


def oidc_configured(settings: Settings) -> bool:
    return settings.oidc_sign_in


def saml_configured(settings: Settings) -> bool:
    # Not oauth/saml.py's function: a campus that signs nobody in with SAML never imports SAML's
    # libraries (pysaml2 and xmlschema: 22 MB of every worker, seconds of its start).
    return settings.saml_sign_in


def idp_configured(settings: Settings) -> bool:
    """A campus sign-in (OpenID Connect, SAML or CAS) is set up: the settings' one rule."""
    return settings.campus_sign_in


def provide_login_limit(oauth: NamedDependency[OAuthService]) -> LoginLimit:
    # Holds no state of its own (the attempts are rows), so one per request costs nothing.
    settings = oauth.settings
    return LoginLimit(
        oauth.store.sessions,
        account_limit=settings.login_max_failures,
        address_limit=settings.login_address_max_failures,
        window_seconds=settings.login_window_seconds,
    )


def provide_oidc(settings: NamedDependency[Settings]) -> OidcClient:
    return OidcClient(settings)


LOGIN_DEPENDENCIES = {
    **OAUTH_DEPENDENCIES,
    "login_limit": Provide(provide_login_limit, sync_to_thread=False),
}


def login_page(
    request: Request[Any, Any, Any],
    settings: Settings,
    next_url: str,
    *,
    error: str = "",
    username: str = "",
    status: int = 200,
) -> Response[str]:
    if not settings.local_accounts and not idp_configured(settings) and not error:
        error = LOCAL_ACCOUNTS_OFF_NO_IDP  # no way in on this page: say so, and whom to ask
    body = login_body(
        campus=settings.campus_name,
        next_url=next_url,
        csrf=csrf_token(request),
        error=error,
        username=username,
        oidc_label=settings.oidc_button_label if oidc_configured(settings) else "",
        saml_label=settings.saml_button_label if saml_configured(settings) else "",
        cas_label=settings.cas_button_label if cas_configured(settings) else "",
        demo=settings.demo,
        app=asking_for(request, next_url),
        local_accounts=settings.local_accounts,
    )
    return html_response(page("Sign in", body, product=settings.product_name), status=status)


def address_of(request: Request[Any, Any, Any], settings: Settings) -> str:
    return client_address(request.scope, trusted_proxies(settings))


LOCAL_ACCOUNTS_OFF = (
    "Sign-in with a username and password is switched off on this campus. Use the campus sign-in button on this page."
)
LOCAL_ACCOUNTS_OFF_NO_IDP = (
    "Sign-in with a username and password is switched off on this campus, and no campus sign-in is "
    "set up. Ask your campus IT to set up CAMPUS_MCP_OIDC_ISSUER (or CAMPUS_MCP_SAML_IDP_METADATA, CAMPUS_MCP_CAS_SERVER_URL) or to switch local accounts back on."
)


def refusal_words(verdict: Verdict, minutes: int) -> str:
    if verdict is Verdict.ACCOUNT_LOCKED:
        return (
            f"Too many failed sign-ins for this account. Wait {minutes} minutes and try again, "
            "or ask your campus IT to unlock it (campus-mcp students unlock)."
        )
    return (
        f"Too many failed sign-ins from your network address. Wait {minutes} minutes and try again, "
        "or ask your campus IT to unlock the address (campus-mcp students unlock --address)."
    )


class LoginController(Controller):
    """The local login form (rate-limited per account and per address) and sign-out."""

    path = "/"
    dependencies = LOGIN_DEPENDENCIES

    @get("/login", opt=NO_PARITY, include_in_schema=False)
    async def login_form(self, request: Request[Any, Any, Any], settings: NamedDependency[Settings]) -> Response[str]:
        return login_page(request, settings, safe_next(request.query_params.get("next")))

    @post("/login", opt=NO_PARITY, include_in_schema=False)
    async def login_submit(
        self,
        request: Request[Any, Any, Any],
        settings: NamedDependency[Settings],
        store: NamedDependency[OAuthStore],
        login_limit: NamedDependency[LoginLimit],
    ) -> Response[Any]:
        form = await request.form()
        next_url = safe_next(form.get("next"))
        username = str(form.get("username") or "")[:150]
        if not settings.local_accounts:
            # The form is not shown; a post is someone's old page or a script. Nothing is checked.
            words = LOCAL_ACCOUNTS_OFF if idp_configured(settings) else LOCAL_ACCOUNTS_OFF_NO_IDP
            return login_page(request, settings, next_url, error=words, status=403)
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return login_page(
                request, settings, next_url, error="The form expired. Sign in again.", username=username, status=403
            )
        attempt = await login_limit.begin_attempt(address_of(request, settings), username)
        if not attempt.checked:
            minutes = max(1, settings.login_window_seconds // 60)
            response = login_page(
                request,
                settings,
                next_url,
                error=refusal_words(attempt.verdict, minutes),
                username=username,
                status=429,
            )
            response.headers["Retry-After"] = str(settings.login_window_seconds)
            return response
        async with store.sessions() as session:
            student = await authenticate(session, settings, username, str(form.get("password") or ""))
        if student is None:
            # The attempt stays recorded: it is one of the account's and the address's failures.
            if attempt.verdict is Verdict.SLOWED:
                await asyncio.sleep(SOFT_PHASE_DELAY_SECONDS)
            return login_page(
                request,
                settings,
                next_url,
                error="That username and password do not match.",
                username=username,
                status=401,
            )
        await login_limit.succeeded(attempt)
        sign_in(request, settings, student.id, student.username, student.session_generation)
        return Redirect(next_url, status_code=303)

    @post("/logout", opt=NO_PARITY, include_in_schema=False, status_code=303)
    async def logout(
        self, request: Request[Any, Any, Any], settings: NamedDependency[Settings], store: NamedDependency[OAuthStore]
    ) -> Response[Any]:
        form = await request.form()
        user = session_user(request)
        if user is not None and not csrf_ok(request, form.get(CSRF_FIELD)):
            # Not signed out: the post did not come from one of this server's pages (or the page
            # was older than the session). Ask again, with a form that works.
            body = (
                '<h1>Sign out?</h1><p class="error" role="alert">The sign-out form expired. '
                "Sign out here; it ends your session in every browser.</p>"
            )
            return html_response(
                page(
                    "Sign out",
                    body,
                    product=settings.product_name,
                    signed_in_as=signed_in_name(request),
                    csrf=csrf_token(request),
                ),
                status=403,
            )
        # Signed in through the campus identity provider: end its session too, when it offers that.
        via_idp = session_data(request).get("idp") is True and oidc_configured(settings)
        await sign_out(request, store.sessions)
        idp_logout = await OidcClient(settings).logout_url(settings.base_url + "/") if via_idp else None
        return Redirect(idp_logout or "/", status_code=303)


OIDC_DEPENDENCIES = {**LOGIN_DEPENDENCIES, "oidc": Provide(provide_oidc, sync_to_thread=False)}


class OidcLoginController(Controller):
    """Sign-in through the campus's OpenID Connect provider (only when one is configured)."""

    path = "/"
    dependencies = OIDC_DEPENDENCIES

    @get("/login/oidc", opt=NO_PARITY, include_in_schema=False)
    async def oidc_start(
        self, request: Request[Any, Any, Any], settings: NamedDependency[Settings], oidc: NamedDependency[OidcClient]
    ) -> Response[Any]:
        next_url = safe_next(request.query_params.get("next"))
        try:
            url, pending = await oidc.start()
        except OidcError as exc:
            return login_page(request, settings, next_url, error=str(exc), status=502)
        data = session_data(request)
        data["oidc"] = {**pending, "next": next_url}
        request.set_session(data)
        return Redirect(url, status_code=303)

    @get("/login/oidc/callback", opt=NO_PARITY, include_in_schema=False)
    async def oidc_callback(
        self,
        request: Request[Any, Any, Any],
        settings: NamedDependency[Settings],
        store: NamedDependency[OAuthStore],
        oidc: NamedDependency[OidcClient],
        oauth: NamedDependency[OAuthService],
    ) -> Response[Any]:
        code, state = request.query_params.get("code"), request.query_params.get("state")
        data = session_data(request)
        pending = dict(data.pop("oidc", None) or {})
        request.set_session(data)  # a sign-in answer is used once: a replayed one finds nothing pending
        next_url = safe_next(pending.get("next"))
        try:
            claims = await oidc.finish(pending, code=code, state=state)
            async with store.sessions() as session, session.begin():
                student = await oidc.student(session, claims)
                user_id, username, generation = student.id, student.username, student.session_generation
        except OidcRefused as exc:
            # Signed in at the provider, not admitted here: nothing was created (the transaction rolled back).
            back_to = await access_denied_return(oauth, next_url)  # the app waiting for this sign-in
            return sign_in_refused(exc, product=settings.product_name, admitted=False, back_to=back_to)
        except OidcError as exc:
            return sign_in_refused(exc, product=settings.product_name, admitted=True)
        sign_in(request, settings, user_id, username, generation)
        request.set_session({**session_data(request), "idp": True})
        return Redirect(next_url, status_code=303)


def login_controllers(settings: Settings) -> list[type[Controller]]:
    """The sign-in controllers: the local form always, OpenID Connect, SAML and CAS when configured."""
    from campus_mcp.oauth.cas_login import CasLoginController  # these build on this module

    controllers: list[type[Controller]] = [LoginController]
    if oidc_configured(settings):
        controllers.append(OidcLoginController)
    if saml_configured(settings):
        from campus_mcp.oauth.saml_login import SamlLoginController  # SAML's libraries: only when used

        controllers.append(SamlLoginController)
    if cas_configured(settings):
        controllers.append(CasLoginController)
    return controllers
