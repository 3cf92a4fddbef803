"""authlib's authorization server, glued to Litestar and to the async store.

authlib does the protocol: the authorization code grant with PKCE, the refresh grant,
registration (RFC 7591), revocation (RFC 7009) and the ``iss`` parameter (RFC 9207). Its
server is synchronous, so each call runs in a worker thread (``anyio.to_thread``) and the
storage methods it calls hop back to the event loop (``anyio.from_thread``) to use the async
database. What authlib lacks is here: the resource indicator (RFC 8707) and client ID metadata
documents, and the rules of seed 000 that tighten its defaults (S256 only, compared in constant
time; public clients only; unknown scopes refused; codes claimed before the verifier check).
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import re
import secrets
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, TypeVar

import anyio.from_thread
import anyio.to_thread
from authlib.common.security import is_secure_transport
from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import (
    InvalidClientError,
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
    JsonPayload,
    JsonRequest,
    OAuth2Error,
    OAuth2Payload,
    OAuth2Request,
)
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError, InvalidRedirectURIError
from authlib.oauth2.rfc7636 import CodeChallenge, create_s256_code_challenge
from authlib.oauth2.rfc9207 import IssuerParameter

from campus_mcp.assembly.access import LEGACY_READ_SCOPE, on_step_up_list
from campus_mcp.assembly.registry import Registry
from campus_mcp.base.db import utcnow
from campus_mcp.oauth.cimd import CACHE_SECONDS, MetadataDocumentError, fetch_metadata_document, is_metadata_url
from campus_mcp.oauth.registration import metadata_problem
from campus_mcp.oauth.store import ACCESS_TOKEN_SECONDS, ClientRecord, CodeRecord, OAuthStore, TokenRecord, UserRecord
from campus_mcp.plugin.principal import Principal

T = TypeVar("T")
log = logging.getLogger(__name__)
# authlib logs issued tokens at DEBUG ("Issue token ..."): never let that reach a log, whatever
# level the deployment's logging is configured at.
logging.getLogger("authlib").setLevel(logging.INFO)

AUTHORIZE_PATH = "/api/oauth/authorize"
TOKEN_PATH = "/api/oauth/token"  # noqa: S105 - a path, not a secret
REGISTER_PATH = "/api/oauth/register"
REVOKE_PATH = "/api/oauth/revoke"


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """RFC 8707: the ``resource`` is not this server's MCP endpoint."""

    error = "invalid_target"


@dataclasses.dataclass
class OAuthReply:
    """What authlib answers, before it becomes a Litestar response (outside the worker thread)."""

    status: int
    body: Any
    headers: list[tuple[str, str]]

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"] + [("Location", value)]


class _Payload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        self._data: dict[str, str] = {}
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in pairs:
            self._data.setdefault(key, value)
            self._datalist[key].append(value)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class CampusRequest(OAuth2Request):  # type: ignore[misc]
    """An OAuth request read from Litestar in the event loop, handed to authlib in a thread."""

    def __init__(
        self,
        method: str,
        uri: str,
        headers: Mapping[str, str],
        query: Sequence[tuple[str, str]] = (),
        form: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(method=method, uri=uri, headers=dict(headers))
        self._args = dict(query)
        self._form = dict(form)
        # Like Flask's request.values: the query, then the form.
        self.payload = _Payload([*query, *form])
        # The scopes the student checked; set by the consent page before the code is made.
        self.granted_scope: str = ""

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _JsonPayload(JsonPayload):  # type: ignore[misc]
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @property
    def data(self) -> dict[str, Any]:
        return self._data


class CampusJsonRequest(JsonRequest):  # type: ignore[misc]
    def __init__(self, uri: str, headers: Mapping[str, str], data: dict[str, Any]) -> None:
        super().__init__("POST", uri, dict(headers))
        self.payload = _JsonPayload(data)


_UNSAFE_DESCRIPTION = re.compile(r"[^\x20-\x21\x23-\x5b\x5d-\x7e]")


def safe_description(text: str) -> str:
    """RFC 6749 allows printable ASCII without quote and backslash in error_description."""
    return _UNSAFE_DESCRIPTION.sub("?", text)


def _in_loop(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run an async store call on the event loop from authlib's worker thread."""
    return anyio.from_thread.run(fn, *args)  # type: ignore[arg-type]


def _constant_time_s256(verifier: str, challenge: str) -> bool:
    return hmac.compare_digest(create_s256_code_challenge(verifier).encode(), challenge.encode())


class S256Only(CodeChallenge):  # type: ignore[misc]
    """PKCE is required, S256 is the only method, and the comparison takes constant time."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]  # noqa: RUF012 - authlib reads these class attributes
    CODE_CHALLENGE_METHODS = {"S256": _constant_time_s256}  # noqa: RUF012

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge with code_challenge_method=S256.")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256 (plain is not accepted).")
        super().validate_code_challenge(grant, redirect_uri)


class ResourceIndicator:
    """RFC 8707 at the authorization endpoint: ``resource``, when sent, must be the MCP endpoint."""

    def __init__(self, mcp_url: str) -> None:
        self.mcp_url = mcp_url

    def __call__(self, grant: Any) -> None:
        grant.register_hook("after_validate_authorization_request_payload", self.check)

    def check(self, grant: Any, redirect_uri: str) -> None:
        resources = grant.request.payload.datalist.get("resource", [])
        if any(value != self.mcp_url for value in resources):
            raise InvalidTargetError(
                f"The resource must be this server's MCP endpoint, {self.mcp_url}.", redirect_uri=redirect_uri
            )


class CampusIssuer(IssuerParameter):  # type: ignore[misc]
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]  # noqa: RUF012 - every client is public
    server: CampusAuthorizationServer

    def save_authorization_code(self, code: str, request: CampusRequest) -> None:
        _in_loop(
            lambda: self.server.service.store.save_code(
                code,
                client_id=request.client.client_id,
                user_id=request.user.id,
                redirect_uri=request.payload.redirect_uri or "",
                scope=request.granted_scope,
                resource=self.server.service.settings.mcp_url,
                code_challenge=request.payload.data["code_challenge"],
            )
        )

    def query_authorization_code(self, code: str, client: ClientRecord) -> CodeRecord | None:
        # Claimed here, before the verifier is compared: a wrong verifier burns the code.
        return _in_loop(self.server.service.store.claim_code, code, client.client_id)

    def delete_authorization_code(self, authorization_code: CodeRecord) -> None:
        """Nothing to do: the code was used up when it was claimed."""

    def authenticate_user(self, authorization_code: CodeRecord) -> UserRecord:
        return authorization_code.user


REFRESH_REUSED = (
    "This refresh token was already used once, so a copy of it may be in other hands: every token of this "
    "sign-in is now revoked. Sign in again."
)
REFRESH_ENDED = "This sign-in has ended (it was revoked, or its refresh token expired). Sign in again."


class RefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
    """Refresh token rotation with reuse detection (RFC 9700 4.14.2).

    The order is what makes it safe: the token is looked up without being changed, then the
    client and the scope are checked, and only then is it claimed, in the same transaction that
    saves the new pair (:meth:`save_token`). So a refresh refused for what it asks (another
    client, a wider scope) leaves the token working for its rightful client, and of refreshes
    racing with one token exactly one wins. A used token presented again, whoever presents it, is
    reuse: the family is revoked, the pair that replaced the token included. In a race that means
    the winner's new tokens stop working too; the app signs in again, which is the price RFC 9700
    accepts for never leaving a live token in a family whose token leaked.
    """

    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]  # noqa: RUF012
    INCLUDE_NEW_REFRESH_TOKEN = True  # each refresh rotates the refresh token
    server: CampusAuthorizationServer

    def authenticate_refresh_token(self, refresh_token: str) -> TokenRecord:
        store = self.server.service.store
        record = _in_loop(store.find_refresh_token, refresh_token)
        if record is None:
            raise InvalidGrantError("This refresh token is not one this server issued. Sign in again.")
        if record.refresh_used:
            _in_loop(lambda: store.revoke(record, family=True))
            raise InvalidGrantError(REFRESH_REUSED)
        if record.revoked or record.refresh_expires_at is None or record.refresh_expires_at <= utcnow():
            raise InvalidGrantError(REFRESH_ENDED)
        # authlib set the client before asking for the token; its own check gives no reason.
        if not record.check_client(self.request.client):
            raise InvalidGrantError(
                "This refresh token was issued to another app: send the client_id it was issued to."
            )
        return record

    def _validate_token_scope(self, token: TokenRecord) -> None:
        # Replaces authlib's check (same rule) to say which scopes were too many.
        granted = set(token.get_scope().split())
        wider = sorted(set(scope_to_list(self.request.payload.scope) or []) - granted)
        if wider:
            raise InvalidScopeError(
                f"A refresh can keep or narrow the scopes, never widen them; not granted: {' '.join(wider)}. "
                "Omit scope to keep the granted ones, or have the student sign in again to grant more."
            )

    def authenticate_user(self, refresh_token: TokenRecord) -> UserRecord:
        return refresh_token.user

    def save_token(self, token: dict[str, Any]) -> None:
        """Claim the old refresh token and save the new pair, in one transaction."""
        used: TokenRecord = self.request.refresh_token
        outcome = _in_loop(
            lambda: self.server.service.store.rotate_refresh_token(
                used,
                access_token=token["access_token"],
                refresh_token=token["refresh_token"],
                scope=token.get("scope", used.scope),
            )
        )
        if outcome == "reused":
            raise InvalidGrantError(REFRESH_REUSED)
        if outcome == "ended":
            raise InvalidGrantError(REFRESH_ENDED)

    def revoke_old_credential(self, refresh_token: TokenRecord) -> None:
        """Nothing to do: the old refresh token was used up when the new pair was saved."""


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ["none"]  # noqa: RUF012
    server: CampusAuthorizationServer

    def query_token(self, token_string: str, token_type_hint: str | None) -> TokenRecord | None:
        return _in_loop(self.server.service.store.find_token, token_string, token_type_hint)

    def revoke_token(self, token: TokenRecord, request: CampusRequest) -> None:
        # A refresh token stands for the whole grant, so revoking it ends the family (RFC 7009 2.1).
        family = request.form.get("token_type_hint") != "access_token"
        _in_loop(lambda: self.server.service.store.revoke(token, family=family))


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    server: CampusAuthorizationServer

    def authenticate_token(self, request: CampusJsonRequest) -> bool:
        # Open registration (RFC 7591 without an initial access token), as MCP clients expect.
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return self.server.service.metadata()

    def extract_client_metadata(self, request: CampusJsonRequest) -> dict[str, Any]:
        data = request.payload.data
        # Types and sizes first: authlib's own checks assume the types RFC 7591 names.
        problem = metadata_problem(data)
        if problem:
            refusal = InvalidRedirectURIError if problem.redirect else InvalidClientMetadataError
            raise refusal(safe_description(problem.description))
        # Every client is public: whatever method was asked for, "none" is what it gets (RFC 7591
        # lets the server substitute values; the response tells the client).
        data.pop("token_endpoint_auth_method", None)
        data.pop("client_secret", None)
        metadata: dict[str, Any] = super().extract_client_metadata(request)
        metadata["token_endpoint_auth_method"] = "none"  # noqa: S105 - an auth method name
        metadata["grant_types"] = ["authorization_code", "refresh_token"]
        metadata["response_types"] = ["code"]
        return metadata

    def generate_client_info(self, request: CampusJsonRequest) -> dict[str, Any]:
        # No secret: public clients authenticate with PKCE.
        return {"client_id": f"cmcp_{secrets.token_urlsafe(24)}", "client_id_issued_at": int(time.time())}

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any) -> ClientRecord:
        name = client_metadata.get("client_name")
        record = ClientRecord(
            client_id=client_info["client_id"],
            kind="registered",
            client_name=name.strip()[:300] if isinstance(name, str) and name.strip() else "Unnamed app",
            redirect_uris=tuple(client_metadata["redirect_uris"]),
            scope=client_metadata.get("scope") or "",
            client_uri=client_metadata.get("client_uri"),
        )
        _in_loop(self.server.service.store.save_client, record)
        return record


class CampusAuthorizationServer(AuthorizationServer):  # type: ignore[misc]
    def __init__(self, service: OAuthService) -> None:
        super().__init__(scopes_supported=list(service.registry.scopes))
        self.service = service
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                access_token_generator=lambda **_: f"cmcp_at_{secrets.token_urlsafe(32)}",
                refresh_token_generator=lambda **_: f"cmcp_rt_{secrets.token_urlsafe(32)}",
                expires_generator=lambda client, grant_type: ACCESS_TOKEN_SECONDS,
            ),
        )
        self.register_grant(CodeGrant, [S256Only(required=True), ResourceIndicator(service.settings.mcp_url)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation)
        self.register_endpoint(Registration)
        self.register_extension(CampusIssuer(service.settings.base_url))

    def query_client(self, client_id: str) -> ClientRecord | None:
        return _in_loop(self.service.client, client_id)

    def save_token(self, token: dict[str, Any], request: CampusRequest) -> None:
        """The tokens of a code exchange (a refresh saves its own: :meth:`RefreshGrant.save_token`)."""
        source: CodeRecord = request.authorization_code
        _in_loop(
            lambda: self.service.store.save_tokens(
                access_token=token["access_token"],
                refresh_token=token.get("refresh_token"),
                client_id=request.client.client_id,
                user_id=request.user.id,
                scope=token.get("scope", ""),
                resource=self.service.settings.mcp_url,
                family_id=source.family_id,
            )
        )

    def validate_requested_scope(self, scope: str | None) -> None:
        asked = (scope or "").split()
        unknown = sorted(s for s in asked if s not in self.service.registry.scopes and s != LEGACY_READ_SCOPE)
        if unknown:
            raise InvalidScopeError(
                f"Unknown scope(s): {', '.join(unknown)}. This server offers: {' '.join(self.service.registry.scopes)}."
            )

    def create_oauth2_request(self, request: CampusRequest) -> CampusRequest:
        return request

    def create_json_request(self, request: CampusJsonRequest) -> CampusJsonRequest:
        return request

    def handle_response(self, status: int, body: Any, headers: Sequence[tuple[str, str]]) -> OAuthReply:
        return OAuthReply(status=status, body=body, headers=list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        """authlib's signals are not used."""


class OAuthService:
    """The async face of the authorization server, used by the routes and the MCP endpoint."""

    def __init__(self, registry: Registry, store: OAuthStore) -> None:
        self.registry = registry
        self.settings = registry.settings
        self.store = store
        self.server = CampusAuthorizationServer(self)
        # OAuth 2.1 needs TLS except on loopback; authlib refuses other http URLs outright.
        self.transport_problem = (
            None
            if is_secure_transport(self.settings.base_url)
            else (
                f"Sign-in needs https: the public URL {self.settings.base_url} is plain http on a host that is not "
                "this machine. Serve the campus over https and set CAMPUS_MCP_PUBLIC_URL to that https URL."
            )
        )
        if self.transport_problem:
            log.warning(self.transport_problem)

    # metadata ------------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 authorization server metadata."""
        base = self.settings.base_url
        return {
            "issuer": base,
            "authorization_endpoint": base + AUTHORIZE_PATH,
            "token_endpoint": base + TOKEN_PATH,
            "registration_endpoint": base + REGISTER_PATH,
            "revocation_endpoint": base + REVOKE_PATH,
            "scopes_supported": list(self.registry.scopes),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
            "service_documentation": base + "/",
        }

    def protected_resource_metadata(self) -> dict[str, Any]:
        """RFC 9728 metadata of the MCP endpoint."""
        return {
            "resource": self.settings.mcp_url,
            "authorization_servers": [self.settings.base_url],
            "scopes_supported": list(self.registry.scopes),
            "bearer_methods_supported": ["header"],
            "resource_name": self.settings.product_name,
            "resource_documentation": self.settings.base_url + "/",
        }

    # clients -------------------------------------------------------------------------------

    async def client(self, client_id: str) -> ClientRecord | None:
        """A registered client, or a metadata-document client fetched (or taken from the 1-hour copy)."""
        stored = await self.store.client(client_id)
        if not is_metadata_url(client_id):
            return stored[0] if stored else None
        if stored is not None:
            record, fetched_at = stored
            if fetched_at is not None and utcnow() - fetched_at < timedelta(seconds=CACHE_SECONDS):
                return record
        try:
            record = await fetch_metadata_document(client_id, self.settings, known_scopes=list(self.registry.scopes))
        except MetadataDocumentError as exc:
            raise InvalidClientError(description=safe_description(f"This app cannot sign in: {exc}.")) from None
        await self.store.save_client(record, fetched_at=utcnow())
        return record

    # protocol calls (each in a worker thread) ----------------------------------------------

    async def consent_grant(self, request: CampusRequest) -> CodeGrant:
        """Validate an authorization request. Raises OAuth2Error (with redirect_uri when redirectable)."""
        grant: CodeGrant = await anyio.to_thread.run_sync(self.server.get_consent_grant, request)
        return grant

    async def authorize(self, request: CampusRequest, grant: CodeGrant, user: UserRecord | None) -> OAuthReply:
        reply: OAuthReply = await anyio.to_thread.run_sync(
            lambda: self.server.create_authorization_response(request, grant_user=user, grant=grant)
        )
        return reply

    async def token(self, request: CampusRequest) -> OAuthReply:
        resources = request.payload.datalist.get("resource", [])
        if any(value != self.settings.mcp_url for value in resources):
            error = InvalidTargetError(f"The resource must be this server's MCP endpoint, {self.settings.mcp_url}.")
            return self.server.handle_error_response(request, error)  # type: ignore[no-any-return]
        reply: OAuthReply = await anyio.to_thread.run_sync(self.server.create_token_response, request)
        return reply

    async def revoke(self, request: CampusRequest) -> OAuthReply:
        reply: OAuthReply = await anyio.to_thread.run_sync(
            self.server.create_endpoint_response, RevocationEndpoint.ENDPOINT_NAME, request
        )
        return reply

    async def register(self, request: CampusJsonRequest) -> OAuthReply:
        reply: OAuthReply = await anyio.to_thread.run_sync(
            self.server.create_endpoint_response, ClientRegistrationEndpoint.ENDPOINT_NAME, request
        )
        return reply

    def error_redirect(self, error: OAuth2Error) -> OAuthReply | None:
        """The redirect for an error the client should hear about (its redirect URI is known)."""
        if not error.redirect_uri:
            return None
        status, body, headers = error()
        reply = OAuthReply(status=status, body=body, headers=list(headers))
        if reply.location:
            reply.location = add_params_to_uri(reply.location, {"iss": self.settings.base_url})
        return reply

    # the resource server side --------------------------------------------------------------

    async def resolve_token(self, token: str) -> Principal | None:
        """The MCP endpoint's TokenResolver: live, and issued for this endpoint (audience)."""
        return await self.store.principal_for(token, self.settings.mcp_url)

    async def other_resource(self, token: str) -> str | None:
        """For a refused token: the other endpoint it was issued for (a live token of this server
        minted for another URL, such as another port); None when that is not why it was refused."""
        resource = await self.store.live_resource(token)
        return resource if resource is not None and resource != self.settings.mcp_url else None

    def on_step_up_list(self, client: ClientRecord) -> bool:
        """Whether this client is on the step-up allow list (by client id or client name)."""
        return on_step_up_list(self.settings.step_up_clients, client.client_id, client.client_name)

    async def step_up_allowed(self, principal: Principal) -> bool:
        """:meth:`on_step_up_list` for the client of a token (its name is read only when needed)."""
        allowed = self.settings.step_up_clients
        if not allowed or principal.client_id is None:
            return False
        if principal.client_id in allowed:
            return True
        stored = await self.store.client(principal.client_id)
        return stored is not None and self.on_step_up_list(stored[0])
