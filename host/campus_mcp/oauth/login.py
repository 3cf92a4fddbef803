"""Signing in and out: the local login form (rate-limited per address) and OpenID Connect.

Failed sign-ins are counted per address in the database (so every web worker sees the same
count); after ``login_max_failures`` in ``login_window_seconds`` the address gets 429 until the
window passes. The count covers wrong usernames too, so guessing names costs the same, and an
attempt is counted before its password is checked (``login_limit``), so a parallel burst gets no
more checks than the limit.
Passwords are never logged, echoed or kept.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.response import Redirect

from campus_mcp.accounts import authenticate
from campus_mcp.oauth.login_limit import LoginLimit
from campus_mcp.oauth.oidc import OidcClient, OidcError
from campus_mcp.oauth.pages import error_body, html_response, login_body, page
from campus_mcp.oauth.session import (
    CSRF_FIELD,
    csrf_ok,
    csrf_token,
    safe_next,
    session_data,
    sign_in,
    sign_out,
)
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.registry import Registry

NO_PARITY = {"exclude_from_parity": True}


def login_handlers(registry: Registry, store: OAuthStore) -> list[Any]:
    settings = registry.settings
    oidc = OidcClient(settings) if settings.oidc_issuer and settings.oidc_client_id else None
    limit = LoginLimit(store.sessions, limit=settings.login_max_failures, window_seconds=settings.login_window_seconds)

    def login_page(
        request: Request[Any, Any, Any], next_url: str, *, error: str = "", username: str = "", status: int = 200
    ) -> Response[str]:
        body = login_body(
            campus=settings.campus_name,
            next_url=next_url,
            csrf=csrf_token(request),
            error=error,
            username=username,
            oidc_label=settings.oidc_button_label if oidc else "",
            demo=settings.demo,
        )
        return html_response(page("Sign in", body, product=settings.product_name), status=status)

    def address_of(request: Request[Any, Any, Any]) -> str:
        return request.client.host if request.client else "unknown"

    @get("/login", opt=NO_PARITY, include_in_schema=False)
    async def login_form(request: Request[Any, Any, Any]) -> Response[str]:
        return login_page(request, safe_next(request.query_params.get("next")))

    @post("/login", opt=NO_PARITY, include_in_schema=False)
    async def login_submit(request: Request[Any, Any, Any]) -> Response[Any]:
        form = await request.form()
        next_url = safe_next(form.get("next"))
        username = str(form.get("username") or "")[:150]
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return login_page(
                request, next_url, error="The form expired. Sign in again.", username=username, status=403
            )
        attempt = await limit.begin_attempt(address_of(request))
        if attempt is None:
            minutes = max(1, settings.login_window_seconds // 60)
            response = login_page(
                request,
                next_url,
                error=f"Too many failed sign-ins from your network address. Wait {minutes} minutes and try again.",
                username=username,
                status=429,
            )
            response.headers["Retry-After"] = str(settings.login_window_seconds)
            return response
        async with store.sessions() as session:
            student = await authenticate(session, settings, username, str(form.get("password") or ""))
        if student is None:
            # The attempt stays recorded: it is one of the address's failures in the window.
            return login_page(
                request, next_url, error="That username and password do not match.", username=username, status=401
            )
        await limit.succeeded(attempt)
        sign_in(request, settings, student.id, student.username, student.session_generation)
        return Redirect(next_url, status_code=303)

    @post("/logout", opt=NO_PARITY, include_in_schema=False, status_code=303)
    async def logout(request: Request[Any, Any, Any]) -> Redirect:
        await sign_out(request, store.sessions)
        return Redirect("/", status_code=303)

    handlers: list[Any] = [login_form, login_submit, logout]
    if oidc is None:
        return handlers

    @get("/login/oidc", opt=NO_PARITY, include_in_schema=False)
    async def oidc_start(request: Request[Any, Any, Any]) -> Response[Any]:
        next_url = safe_next(request.query_params.get("next"))
        try:
            url, pending = await oidc.start()
        except OidcError as exc:
            return login_page(request, next_url, error=str(exc), status=502)
        data = session_data(request)
        data["oidc"] = {**pending, "next": next_url}
        request.set_session(data)
        return Redirect(url, status_code=303)

    @get("/login/oidc/callback", opt=NO_PARITY, include_in_schema=False)
    async def oidc_callback(request: Request[Any, Any, Any]) -> Response[Any]:
        code, state = request.query_params.get("code"), request.query_params.get("state")
        pending = dict(session_data(request).get("oidc") or {})
        next_url = safe_next(pending.get("next"))
        try:
            claims = await oidc.finish(pending, code=code, state=state)
        except OidcError as exc:
            return html_response(
                page("Sign-in failed", error_body("Sign-in failed", str(exc)), product=settings.product_name),
                status=400,
            )
        async with store.sessions() as session, session.begin():
            student = await oidc.student(session, claims)
            user_id, username, generation = student.id, student.username, student.session_generation
        sign_in(request, settings, user_id, username, generation)
        return Redirect(next_url, status_code=303)

    return [*handlers, oidc_start, oidc_callback]
