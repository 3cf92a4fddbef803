"""The authorization server's HTTP endpoints (seed 000 "How the sign-in works").

| route | standard |
| --- | --- |
| GET /.well-known/oauth-protected-resource[/api/mcp] | RFC 9728 |
| GET /.well-known/oauth-authorization-server | RFC 8414 |
| POST /api/oauth/register | RFC 7591 |
| GET, POST /api/oauth/authorize | the login redirect and the consent page |
| POST /api/oauth/token | code exchange and refresh |
| POST /api/oauth/revoke | RFC 7009 |
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from authlib.oauth2.rfc6749 import OAuth2Error
from litestar import Controller, MediaType, Request, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.response import Redirect

from campus_mcp.assembly import access
from campus_mcp.base.mcp_paths import MCP_PATH, PRM_PATH
from campus_mcp.base.settings import Settings
from campus_mcp.oauth.asking_app import AskingApp, remember_for_login
from campus_mcp.oauth.pages import (
    CSS_PATH,
    STYLESHEET,
    ScopeChoice,
    consent_body,
    error_body,
    html_response,
    origin_of,
    page,
)
from campus_mcp.oauth.registration import MAX_BODY_BYTES
from campus_mcp.oauth.secret_once import COPY_SCRIPT, COPY_SCRIPT_PATH
from campus_mcp.oauth.server import (
    AUTHORIZE_PATH,
    REGISTER_PATH,
    REVOKE_PATH,
    TOKEN_PATH,
    CampusJsonRequest,
    CampusRequest,
    OAuthReply,
    OAuthService,
)
from campus_mcp.oauth.session import CSRF_FIELD, csrf_ok, csrf_token, session_user, signed_in_name, to_login
from campus_mcp.oauth.store import OAuthStore, UserRecord

NO_PARITY = {"exclude_from_parity": True}
# The authorization request's own parameters, carried from the consent page to its POST.
AUTHORIZE_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)


def reply_response(reply: OAuthReply) -> Response[Any]:
    headers = dict(reply.headers)
    headers.pop("Content-Type", None)
    if isinstance(reply.body, (dict, list)):
        return Response(
            json.dumps(reply.body).encode(), status_code=reply.status, headers=headers, media_type=MediaType.JSON
        )
    return Response(
        str(reply.body or "").encode(), status_code=reply.status, headers=headers, media_type=MediaType.TEXT
    )


async def read_capped(request: Request[Any, Any, Any], limit: int) -> bytes | None:
    """The request body, or None as soon as it is longer than ``limit`` (the rest is not read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            return None
    return bytes(body)


def provide_oauth(state: State) -> OAuthService:
    """The deployment's authorization server (``app.state.oauth``, set by ``create_app``)."""
    service: OAuthService = state.oauth
    return service


def provide_store(oauth: NamedDependency[OAuthService]) -> OAuthStore:
    """The authorization server's store: clients, grants, tokens, consents."""
    return oauth.store


OAUTH_DEPENDENCIES = {
    "oauth": Provide(provide_oauth, sync_to_thread=False),
    "store": Provide(provide_store, sync_to_thread=False),
}


def _html(
    settings: Settings,
    title: str,
    body: str,
    *,
    status: int = 200,
    form_targets: tuple[str, ...] = (),
    signed_in_as: str = "",
    csrf: str = "",
) -> Response[str]:
    return html_response(
        page(
            title,
            body,
            product=settings.product_name,
            signed_in_as=signed_in_as,
            nav=[("/dashboard", "Dashboard")],
            csrf=csrf,
        ),
        status=status,
        form_targets=form_targets,
    )


def _error_page(oauth: OAuthService, error: OAuth2Error) -> Response[Any]:
    """A redirectable error goes back to the app; any other is shown to the student."""
    redirect = oauth.error_redirect(error)
    if redirect is not None:
        return reply_response(redirect)
    description = error.description or error.error or "invalid request"
    return _html(
        oauth.settings,
        "This app cannot sign in",
        error_body(
            "This app cannot sign in",
            f"{description} Go back to the app and try connecting again; if it keeps failing, "
            "the app's developer has to fix its sign-in request.",
        ),
        status=400,
    )


def _authorization(oauth: OAuthService, request: Request[Any, Any, Any], pairs: list[tuple[str, str]]) -> CampusRequest:
    return CampusRequest(request.method, oauth.settings.base_url + AUTHORIZE_PATH, dict(request.headers), query=pairs)


class OAuthMetadataController(Controller):
    """What a client reads before it signs in, and the pages' stylesheet: served even while the
    sign-in itself is refused (an insecure public URL), so the client hears why."""

    path = "/"
    dependencies = OAUTH_DEPENDENCIES

    @get(PRM_PATH, opt=NO_PARITY, media_type=MediaType.JSON, include_in_schema=False)
    async def protected_resource(self, oauth: NamedDependency[OAuthService]) -> dict[str, Any]:
        return oauth.protected_resource_metadata()

    @get(PRM_PATH + MCP_PATH, opt=NO_PARITY, media_type=MediaType.JSON, include_in_schema=False)
    async def protected_resource_for_mcp(self, oauth: NamedDependency[OAuthService]) -> dict[str, Any]:
        return oauth.protected_resource_metadata()

    @get("/.well-known/oauth-authorization-server", opt=NO_PARITY, media_type=MediaType.JSON, include_in_schema=False)
    async def authorization_server(self, oauth: NamedDependency[OAuthService]) -> dict[str, Any]:
        return oauth.metadata()

    @get(CSS_PATH, opt=NO_PARITY, media_type="text/css", include_in_schema=False, cache=3600)
    async def stylesheet(self) -> str:
        return STYLESHEET

    @get(COPY_SCRIPT_PATH, opt=NO_PARITY, media_type="text/javascript", include_in_schema=False, cache=3600)
    async def copy_script(self) -> str:
        return COPY_SCRIPT


class OAuthController(Controller):
    """Registration, the consent page and its decision, the token and revocation endpoints."""

    path = "/"
    dependencies = OAUTH_DEPENDENCIES

    @post(REGISTER_PATH, opt=NO_PARITY, include_in_schema=False, status_code=201)
    async def register(self, request: Request[Any, Any, Any], oauth: NamedDependency[OAuthService]) -> Response[Any]:
        # Registrations per address are counted before this runs (campus_mcp.limits, oauth/register):
        # open registration must not be a way to fill the database.
        raw = await read_capped(request, MAX_BODY_BYTES)
        if raw is None:
            return Response(
                {
                    "error": "invalid_client_metadata",
                    "error_description": f"The client metadata is larger than {MAX_BODY_BYTES // 1024} KB, "
                    "more than any registration needs. Send fewer or shorter values.",
                },
                status_code=413,
            )
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            return Response(
                {"error": "invalid_client_metadata", "error_description": "Send the client metadata as a JSON object."},
                status_code=400,
            )
        uri = oauth.settings.base_url + REGISTER_PATH
        reply = await oauth.register(CampusJsonRequest(uri, dict(request.headers), data))
        return reply_response(reply)

    @get(AUTHORIZE_PATH, opt=NO_PARITY, include_in_schema=False)
    async def authorize_page(
        self, request: Request[Any, Any, Any], oauth: NamedDependency[OAuthService]
    ) -> Response[Any]:
        pairs = list(request.query_params.multi_items())
        oauth_request = _authorization(oauth, request, pairs)
        try:
            grant = await oauth.consent_grant(oauth_request)
        except OAuth2Error as error:
            return _error_page(oauth, error)
        user = session_user(request)
        client = grant.client
        if user is None:
            # The login page names the app that asks (kept for this one authorization URL).
            next_url = AUTHORIZE_PATH + "?" + urlencode(pairs)
            remember_for_login(request, next_url, AskingApp.of(client))
            return to_login(next_url)
        registry = oauth.registry
        offered = access.requested_scopes(registry, dict(pairs).get("scope"))
        remembered = await oauth.store.remembered_scopes(user[0], client.client_id)
        # Step-up (seed 000): an app on the allow list that already holds a grant comes back
        # for more; its consent page starts with the requested boxes checked.
        stepping_up = oauth.on_step_up_list(client) and await oauth.store.has_live_grant(user[0], client.client_id)
        choices = [
            ScopeChoice.of(
                s,
                access.starts_checked(s, remembered=remembered, stepping_up=stepping_up),
                [tool.title or tool.name for tool in registry.tools.values() if tool.scope == s.name],
            )
            for s in offered
            if not s.always_on
        ]
        always = [ScopeChoice.of(s, True) for s in registry.scopes.values() if s.always_on]
        redirect_uri = grant.redirect_uri or ""
        csrf = csrf_token(request)
        body = consent_body(
            app=AskingApp.of(client),
            redirect_uri=redirect_uri,
            student=signed_in_name(request),
            product=oauth.settings.product_name,
            choices=choices,
            always_on=always,
            hidden_fields=[(k, v) for k, v in pairs if k in AUTHORIZE_PARAMS],
            csrf=csrf,
        )
        return _html(
            oauth.settings,
            f"Allow {client.client_name}?",
            body,
            form_targets=(origin_of(redirect_uri),),
            signed_in_as=signed_in_name(request),
            csrf=csrf,
        )

    @post(AUTHORIZE_PATH, opt=NO_PARITY, include_in_schema=False, status_code=302)
    async def authorize_decision(
        self, request: Request[Any, Any, Any], oauth: NamedDependency[OAuthService]
    ) -> Response[Any]:
        form = await request.form()
        if not csrf_ok(request, form.get(CSRF_FIELD)):
            return _html(
                oauth.settings,
                "The form expired",
                error_body("The form expired", "Go back to the app and connect again; the page was too old."),
                status=403,
            )
        user = session_user(request)
        if user is None:
            return Redirect("/login", status_code=303)
        pairs = [(k, v) for k, v in form.multi_items() if k in AUTHORIZE_PARAMS and isinstance(v, str)]
        oauth_request = _authorization(oauth, request, pairs)
        try:
            grant = await oauth.consent_grant(oauth_request)
        except OAuth2Error as error:
            return _error_page(oauth, error)
        if form.get("decision") != "allow":
            return reply_response(await oauth.authorize(oauth_request, grant, None))
        registry = oauth.registry
        requested = access.requested_scopes(registry, dict(pairs).get("scope"))
        checked, oauth_request.granted_scope = access.granted_scope(
            registry,
            offered=[s.name for s in requested if not s.always_on],
            checked=[v for v in form.getall("scope_choice", []) if isinstance(v, str)],
        )
        await oauth.store.remember_scopes(user[0], grant.client.client_id, checked)
        listed = " ".join(s.name for s in requested)
        if listed and listed != grant.client.scope:
            # A client registered before the scopes were split lists only ``read``: bring it up to date.
            await oauth.store.update_client_scope(grant.client.client_id, listed)
        reply = await oauth.authorize(oauth_request, grant, UserRecord(id=user[0], username=user[1]))
        return reply_response(reply)

    @post(TOKEN_PATH, opt=NO_PARITY, include_in_schema=False)
    async def token(self, request: Request[Any, Any, Any], oauth: NamedDependency[OAuthService]) -> Response[Any]:
        form = await request.form()
        pairs = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
        oauth_request = CampusRequest("POST", oauth.settings.base_url + TOKEN_PATH, dict(request.headers), form=pairs)
        return reply_response(await oauth.token(oauth_request))

    @post(REVOKE_PATH, opt=NO_PARITY, include_in_schema=False)
    async def revoke(self, request: Request[Any, Any, Any], oauth: NamedDependency[OAuthService]) -> Response[Any]:
        form = await request.form()
        pairs = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
        oauth_request = CampusRequest("POST", oauth.settings.base_url + REVOKE_PATH, dict(request.headers), form=pairs)
        return reply_response(await oauth.revoke(oauth_request))


class SignInNotSetUpController(Controller):
    """Stand-ins for the OAuth endpoints while the public URL is insecure: say what to fix."""

    path = "/"
    dependencies = OAUTH_DEPENDENCIES

    @get(AUTHORIZE_PATH, opt=NO_PARITY, include_in_schema=False)
    async def authorize_page(self, oauth: NamedDependency[OAuthService]) -> Response[Any]:
        return html_response(
            page(
                "Sign-in is not set up",
                error_body("Sign-in is not set up", oauth.transport_problem or ""),
                product=oauth.settings.product_name,
            ),
            status=503,
        )

    @post([REGISTER_PATH, TOKEN_PATH, REVOKE_PATH, AUTHORIZE_PATH], opt=NO_PARITY, include_in_schema=False)
    async def endpoint(self, oauth: NamedDependency[OAuthService]) -> Response[Any]:
        return Response(
            {"error": "temporarily_unavailable", "error_description": oauth.transport_problem or ""}, status_code=503
        )


def oauth_controllers(oauth: OAuthService) -> list[type[Controller]]:
    """The authorization server's controllers; the sign-in is refused while the public URL is insecure."""
    sign_in = SignInNotSetUpController if oauth.transport_problem else OAuthController
    return [OAuthMetadataController, sign_in]
