"""The CAS sign-in's pages: the hand-off to the CAS server and the callback with the ticket."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.response import Redirect

from campus_mcp.oauth.app_return import access_denied_return
from campus_mcp.oauth.cas import CALLBACK_PATH, CasClient, CasError
from campus_mcp.oauth.login import LOGIN_DEPENDENCIES, NO_PARITY
from campus_mcp.oauth.oidc import OidcRefused
from campus_mcp.oauth.pages import sign_in_refused
from campus_mcp.oauth.server import OAuthService
from campus_mcp.oauth.session import safe_next, session_data, sign_in
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.settings import Settings


class CasLoginController(Controller):
    """Sign-in through the campus's CAS server (only when one is configured)."""

    path = "/"
    dependencies = LOGIN_DEPENDENCIES

    @get("/login/cas", opt=NO_PARITY, include_in_schema=False)
    async def cas_start(self, request: Request[Any, Any, Any], settings: NamedDependency[Settings]) -> Response[Any]:
        url, pending = CasClient(settings).start()
        data = session_data(request)
        data["cas"] = {**pending, "next": safe_next(request.query_params.get("next"))}
        request.set_session(data)
        return Redirect(url, status_code=303)

    @get(CALLBACK_PATH, opt=NO_PARITY, include_in_schema=False)
    async def cas_callback(
        self,
        request: Request[Any, Any, Any],
        settings: NamedDependency[Settings],
        store: NamedDependency[OAuthStore],
        oauth: NamedDependency[OAuthService],
    ) -> Response[Any]:
        data = session_data(request)
        pending = dict(data.pop("cas", None) or {})
        request.set_session(data)  # a ticket is taken once: a replayed callback finds nothing pending
        next_url = safe_next(pending.get("next"))
        cas = CasClient(settings)
        try:
            user, attributes = await cas.finish(
                pending, ticket=request.query_params.get("ticket"), nonce=request.query_params.get("s")
            )
            async with store.sessions() as session, session.begin():
                student = await cas.student(session, user, attributes)
                user_id, username, generation = student.id, student.username, student.session_generation
        except OidcRefused as exc:
            # Signed in at the CAS server, not admitted here: nothing was created (rolled back).
            back_to = await access_denied_return(oauth, next_url)  # the app waiting for this sign-in
            return sign_in_refused(exc, product=settings.product_name, admitted=False, back_to=back_to)
        except CasError as exc:
            return sign_in_refused(exc, product=settings.product_name, admitted=True)
        sign_in(request, settings, user_id, username, generation)
        request.set_session({**session_data(request), "idp": "cas"})
        return Redirect(next_url, status_code=303)
