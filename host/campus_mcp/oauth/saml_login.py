"""The SAML sign-in's pages: the SP metadata to register, the hand-off to the IdP, the ACS.

The ACS receives the IdP's Response as a form post from the IdP's page. When the IdP is on another
site than this server (idp.example.org for mcp.campus.edu), the browser does not send our
SameSite=Lax session cookie with that post, so the request this browser started cannot be found:
the ACS then shows a one-button page that posts the same answer again from this site, with the
cookie. On the same site (the usual idp.campus.edu beside mcp.campus.edu) the post goes straight
through.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect

from campus_mcp.oauth.app_return import access_denied_return
from campus_mcp.oauth.login import LOGIN_DEPENDENCIES, NO_PARITY, login_page
from campus_mcp.oauth.oidc import OidcRefused
from campus_mcp.oauth.pages import hidden, html_response, page, sign_in_refused
from campus_mcp.oauth.saml import ACS_PATH, METADATA_PATH, SamlClient, SamlError, sp_metadata
from campus_mcp.oauth.server import OAuthService
from campus_mcp.oauth.session import safe_next, session_data, sign_in
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.settings import Settings

# Marks the second post of the same answer (from this site, with the session cookie).
AGAIN_FIELD = "posted_again"


def _continue_page(settings: Settings, saml_response: str) -> Response[str]:
    body = (
        "<h1>Finish signing in</h1><p>Your campus account signed you in. Continue to finish signing in here.</p>"
        f'<form method="post" action="{ACS_PATH}">{hidden("SAMLResponse", saml_response)}{hidden(AGAIN_FIELD, "1")}'
        '<button type="submit" class="primary">Continue</button></form>'
    )
    return html_response(page("Finish signing in", body, product=settings.product_name))


class SamlLoginController(Controller):
    """Sign-in through the campus's SAML 2.0 identity provider (only when one is configured)."""

    path = "/"
    dependencies = LOGIN_DEPENDENCIES

    @get(METADATA_PATH, opt=NO_PARITY, include_in_schema=False, sync_to_thread=True)
    def metadata(self, settings: NamedDependency[Settings]) -> Response[str]:
        # Public by design: the campus's IdP (or its federation) registers this SP from it.
        return Response(sp_metadata(settings), media_type="application/samlmetadata+xml")

    @get("/login/saml", opt=NO_PARITY, include_in_schema=False)
    async def saml_start(self, request: Request[Any, Any, Any], settings: NamedDependency[Settings]) -> Response[Any]:
        next_url = safe_next(request.query_params.get("next"))
        try:
            url, pending = await SamlClient(settings).start()
        except SamlError as exc:
            return login_page(request, settings, next_url, error=str(exc), status=502)
        data = session_data(request)
        data["saml"] = {**pending, "next": next_url}
        request.set_session(data)
        return Redirect(url, status_code=303)

    @post(ACS_PATH, opt=NO_PARITY, include_in_schema=False, status_code=303)
    async def saml_acs(
        self,
        request: Request[Any, Any, Any],
        settings: NamedDependency[Settings],
        store: NamedDependency[OAuthStore],
        oauth: NamedDependency[OAuthService],
    ) -> Response[Any]:
        form = await request.form()
        saml_response = str(form.get("SAMLResponse") or "")
        data = session_data(request)
        if "saml" not in data and saml_response and not form.get(AGAIN_FIELD):
            return _continue_page(settings, saml_response)  # the cookie stayed behind (another site's post)
        pending = dict(data.pop("saml", None) or {})
        request.set_session(data)  # the request is answered once: a second post finds nothing pending
        next_url = safe_next(pending.get("next"))
        saml = SamlClient(settings)
        try:
            identity = await saml.finish(pending, saml_response, store.sessions)
            async with store.sessions() as session, session.begin():
                student = await saml.student(session, identity)
                user_id, username, generation = student.id, student.username, student.session_generation
        except OidcRefused as exc:
            # Signed in at the IdP, not admitted here: nothing was created (the transaction rolled back).
            back_to = await access_denied_return(oauth, next_url)  # the app waiting for this sign-in
            return sign_in_refused(exc, product=settings.product_name, admitted=False, back_to=back_to)
        except SamlError as exc:
            return sign_in_refused(exc, product=settings.product_name, admitted=True)
        sign_in(request, settings, user_id, username, generation)
        request.set_session({**session_data(request), "idp": "saml"})
        return Redirect(next_url, status_code=303)
