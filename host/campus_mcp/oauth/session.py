"""The browser session of a signed-in student: cookie, CSRF token, and the principal it gives.

The session lives in an encrypted cookie (Litestar's client-side backend, keyed from
``CAMPUS_MCP_SECRET_KEY``), so any web worker can read it and nothing is kept in a process. The
cookie is HttpOnly, SameSite=Lax (the authorization request arrives as a top-level navigation
from the app's site, which Lax allows), and Secure when the public URL is https.

A cookie cannot be taken back, so the session also carries the student's session generation
(``accounts.Student.session_generation``), checked against the database on every request: sign-out
and a password change move it on, and every copy of an older session stops working at once.

A signed-in browser acts as the student with every scope: scopes limit what an *app* may do,
not the student. Bearer tokens are never accepted here: a token works on ``/api/mcp`` only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from litestar import Request
from litestar.enums import ScopeType
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.response import Redirect
from litestar.types import ASGIApp, Receive, Scope, Send
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.accounts import end_sessions, signed_in_student
from campus_mcp.principal import Principal
from campus_mcp.registry import Registry
from campus_mcp.settings import Settings
from campus_mcp.untrusted import UNNAMED_STUDENT

SESSION_COOKIE = "campus_session"
CSRF_FIELD = "csrf_token"
# The signed-in student's name as pages show it, read with the session's generation on each request.
STUDENT_NAME_KEY = "campus_student_name"


def session_config(settings: Settings) -> CookieBackendConfig:
    # A key of its own, derived from the deployment key, so the session never shares a key
    # with requestState sealing.
    key = hashlib.sha256(b"campus-mcp session\0" + settings.seal_key()).digest()
    return CookieBackendConfig(
        secret=key,
        key=SESSION_COOKIE,
        max_age=settings.session_hours * 3600,
        httponly=True,
        samesite="lax",
        secure=settings.base_url.startswith("https://"),
        path="/",
    )


def session_data(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """A copy of the session's data (empty when there is none)."""
    session = request.scope.get("session")
    return dict(session) if isinstance(session, dict) else {}


def signed_in_name(request: Request[Any, Any, Any]) -> str:
    """The name the signed-in student's pages show them by ("Signed in as ..."): their display
    name, never their campus id (``untrusted.shown_name``); empty when nobody is signed in."""
    name = request.scope.get(STUDENT_NAME_KEY)
    if isinstance(name, str) and name:
        return name
    return UNNAMED_STUDENT if session_user(request) is not None else ""


def session_user(request: Request[Any, Any, Any]) -> tuple[int, str] | None:
    """The signed-in student's (id, username), if the session is live.

    The middleware has already dropped a session of an older generation from the request."""
    student = _live_student(request.scope.get("session"))
    return None if student is None else (student[0], student[1])


def _live_student(session: object) -> tuple[int, str, int] | None:
    """The (id, username, session generation) a session cookie signs in, while it has not expired."""
    if not isinstance(session, dict):
        return None
    uid, username, expires = session.get("uid"), session.get("username"), session.get("expires", 0)
    generation = session.get("generation")
    if (
        isinstance(uid, int)
        and isinstance(username, str)
        and isinstance(generation, int)
        and isinstance(expires, (int, float))
        and expires > time.time()
    ):
        return uid, username, generation
    return None


def sign_in(request: Request[Any, Any, Any], settings: Settings, user_id: int, username: str, generation: int) -> None:
    # A fresh session at sign-in (and a fresh CSRF token), so a session planted before cannot be reused.
    request.set_session(
        {
            "uid": user_id,
            "username": username,
            "generation": generation,
            "expires": time.time() + settings.session_hours * 3600,
            "csrf": secrets.token_urlsafe(32),
        }
    )


async def sign_out(request: Request[Any, Any, Any], sessions: async_sessionmaker[AsyncSession]) -> None:
    """Sign the student out of every browser: a copy of this cookie must not stay signed in."""
    student = _live_student(request.scope.get("session"))
    if student is not None:
        async with sessions() as session, session.begin():
            await end_sessions(session, student[0])
    request.clear_session()


def csrf_token(request: Request[Any, Any, Any]) -> str:
    """The session's CSRF token, made on first use (the login form needs one before sign-in)."""
    session = request.scope.get("session")
    token = session.get("csrf") if isinstance(session, dict) else None
    if isinstance(token, str) and token:
        return token
    token = secrets.token_urlsafe(32)
    data = dict(session) if isinstance(session, dict) else {}
    data["csrf"] = token
    request.set_session(data)
    return token


def csrf_ok(request: Request[Any, Any, Any], submitted: str | None) -> bool:
    session = request.scope.get("session")
    expected = session.get("csrf") if isinstance(session, dict) else None
    if not isinstance(expected, str) or not expected or not submitted:
        return False
    return hmac.compare_digest(expected.encode(), submitted.encode())


def signed_in_middleware_factory(registry: Registry, sessions: async_sessionmaker[AsyncSession]) -> Any:
    """ASGI middleware: puts the session's student in ``scope["campus_principal"]``.

    A session whose generation is not the student's current one (signed out, password changed,
    student deleted) is emptied here, before any handler reads it; the response then clears the
    cookie.
    """
    all_scopes = frozenset(registry.scopes)

    async def current(student_id: int) -> tuple[int, str] | None:
        async with sessions() as session:
            return await signed_in_student(session, student_id)

    def middleware(app: ASGIApp) -> ASGIApp:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == ScopeType.HTTP:
                student = _live_student(scope.get("session"))
                now = await current(student[0]) if student is not None else None
                if student is not None and (now is None or now[0] != student[2]):
                    scope["session"] = {}
                    student = None
                if student is not None and now is not None:
                    scope[STUDENT_NAME_KEY] = now[1]  # type: ignore[literal-required]
                    scope["campus_principal"] = Principal(  # type: ignore[typeddict-unknown-key]
                        user_id=student[0],
                        username=student[1],
                        client_id=None,
                        scopes=all_scopes,
                    )
            await app(scope, receive, send)

        return wrapped

    return middleware


def sends_session_cookie(scope: Scope) -> bool:
    """Whether the request may carry the session cookie: a Cookie header that names it anywhere.

    Litestar splits a large session over ``campus_session-0``, ``-1``...; every one of those names
    holds ``campus_session``, and a false match (another cookie's value) only costs a read."""
    marker = SESSION_COOKIE.encode()
    return any(key.lower() == b"cookie" and marker in value for key, value in scope["headers"])


def browser_session_middleware(
    registry: Registry,
    sessions: async_sessionmaker[AsyncSession],
    *,
    cookieless_skip: Callable[[str], bool],
) -> Callable[[ASGIApp], ASGIApp]:
    """The session cookie (Litestar's middleware), then the student it signs in (the one above).

    Both are skipped for an HTTP request to a path where ``cookieless_skip`` holds that sends no
    session cookie: there they would read no cookie, make an empty session, sign nobody in and set
    no cookie on the answer (Litestar clears only cookies the request sent), so skipping them
    changes nothing a client sees and saves their work on each bearer-token or anonymous MCP call.
    A browser that sends the cookie there still gets both: its session's student is
    whom the rate limits count an MCP request without a token against (campus_mcp.limits).
    """
    session = session_config(registry.settings).middleware
    signed_in = signed_in_middleware_factory(registry, sessions)

    def middleware(app: ASGIApp) -> ASGIApp:
        with_session: ASGIApp = session(signed_in(app))

        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == ScopeType.HTTP and cookieless_skip(scope["path"]) and not sends_session_cookie(scope):
                await app(scope, receive, send)
                return
            await with_session(scope, receive, send)

        return wrapped

    return middleware


def to_login(next_path: str) -> Redirect:
    """Send a visitor who is not signed in to the login form, and back to ``next_path`` after."""
    return Redirect(with_next("/login", next_path), status_code=303)


def with_next(path: str, next_url: str) -> str:
    """``path`` with ``next`` URL-encoded: its own ``&state=...`` must stay inside ``next``."""
    return path + "?" + urlencode({"next": safe_next(next_url)})


def safe_next(value: str | None, default: str = "/dashboard") -> str:
    """Only a path on this server: never an open redirect to another site."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return default
    return value
