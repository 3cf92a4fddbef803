"""Sign-in with the campus identity provider over OpenID Connect (authlib's httpx client).

The authorization code flow with PKCE, a ``state`` and a ``nonce`` kept in the session; the ID
token's signature is checked against the provider's published keys, and its issuer, audience,
expiry and nonce against what this server expects. The keys are kept per process and fetched
again only for a key id they lack (the provider rotated its key), not on every sign-in.

The claims the campus maps (``oidc_student_id_claim``, ``oidc_admit_claim``) come from the ID
token, or from the userinfo endpoint when the ID token lacks them (a provider that follows the
specification to the letter puts profile claims only there). A person without an admitted value
of the admit claim is refused with a page saying why and whom to ask, and gets no student record.
A student is known by (issuer, subject) and carries the campus student id.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
from typing import Any
from urllib.parse import urlencode

import httpx
import httpx2
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from joserfc import jwt
from joserfc.errors import BadSignatureError, ExpiredTokenError, InvalidClaimError, JoseError, MissingClaimError
from joserfc.jwk import KeySet
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.accounts import IdentityRefused, Student, oidc_student
from campus_mcp.oauth.campus_id import CampusIdRefused, checked_campus_id
from campus_mcp.outside_documents import (
    DocumentLimit,
    DocumentTooLarge,
    LimitedTransport,
    read_document,
    sign_in_limit,
)
from campus_mcp.settings import Settings

CALLBACK_PATH = "/login/oidc/callback"
# Seconds of clock difference between the provider and this server that an ID token may show.
CLOCK_SKEW = 60
# Seconds each call to the provider (discovery, token, userinfo, keys) may take.
IDP_TIMEOUT_SECONDS = 10.0
UNREACHABLE = "The campus sign-in service cannot be reached. Try again in a few minutes."
NO_ANSWER_IN_TIME = (
    "The campus sign-in service did not answer in time, so the sign-in could not finish. Start again from "
    "the app in a few minutes; if it keeps happening, tell your campus IT."
)
CONNECTION_CUT = (
    "The campus sign-in service broke off the connection (or could not be reached), so the sign-in could "
    "not finish. Start again from the app in a few minutes; if it keeps happening, tell your campus IT."
)
CODE_REFUSED = "The campus sign-in service did not complete the sign-in. Start again from the app."
# A document past its limit (campus_mcp.outside_documents): the student is told whom to tell, the
# log says which document, its limit and the setting (IT's words, not the student's).
TOO_LARGE = (
    "The campus sign-in service sent more than this server reads, so the sign-in stopped. Tell your "
    "campus IT; the server's log says what was too large."
)

log = logging.getLogger(__name__)

# The provider's signing keys by JWKS URL, for this process; fetched again on an unknown key id.
_keys: dict[str, KeySet] = {}
# How many times this process fetched a JWKS (a test proves a sign-in does not fetch it each time).
jwks_fetches = 0


class OidcError(Exception):
    """Why the identity provider sign-in failed, in words for the student."""

    status = 400  # the sign-in answer failed a check


class IdpUnreachable(OidcError):
    """The campus sign-in service did not answer (cut connection, timeout, server error)."""

    status = 502


class OidcRefused(OidcError):
    """The provider signed the person in, but this campus does not admit them (a page says why)."""


def _header(id_token: str) -> dict[str, Any]:
    try:
        encoded = id_token.split(".", 1)[0]
        header: dict[str, Any] = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, IndexError) as exc:
        raise OidcError("The campus sign-in service sent an ID token that cannot be read.") from exc
    return header


def _id_value(value: Any) -> bool:
    """A claim value that can be an id: a string or a whole number (not a bool, a float or an object)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def claim_values(value: Any) -> list[str]:
    """An admit claim as a list of strings: one string, a list of them, or space-separated
    (scope-like). Not for the student id, which is taken whole (``OidcClient.campus_id``)."""
    if isinstance(value, str):
        return value.split() if " " in value.strip() else [value]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, (str, int))]
    return []


class OidcClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.issuer = settings.oidc_issuer.rstrip("/")
        self.redirect_uri = settings.base_url + CALLBACK_PATH

    def _client(self) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=self.settings.oidc_client_id,
            client_secret=self.settings.oidc_client_secret.get_secret_value() or None,
            scope=self.settings.oidc_scopes,
            redirect_uri=self.redirect_uri,
            code_challenge_method="S256",
            timeout=IDP_TIMEOUT_SECONDS,
            # authlib reads the token endpoint's answer itself: read up to its limit underneath.
            transport=LimitedTransport(self._limit("token answer")),
        )

    async def discover(self) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=IDP_TIMEOUT_SECONDS) as http:
                response = await read_document(
                    http, "GET", self.issuer + "/.well-known/openid-configuration", limit=self._limit("discovery")
                )
                response.raise_for_status()
                document: dict[str, Any] = response.json()
        except DocumentTooLarge as exc:
            raise _too_large(exc) from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise IdpUnreachable(UNREACHABLE) from exc
        if document.get("issuer", "").rstrip("/") != self.issuer:
            raise OidcError("The campus sign-in service describes a different issuer; ask IT to check the setup.")
        return document

    async def start(self) -> tuple[str, dict[str, str]]:
        """The provider's authorization URL, and what the callback needs (kept in the session)."""
        document = await self.discover()
        verifier = generate_token(64)
        nonce = secrets.token_urlsafe(24)
        async with self._client() as client:
            url, state = client.create_authorization_url(
                document["authorization_endpoint"], code_verifier=verifier, nonce=nonce
            )
        return url, {"state": state, "verifier": verifier, "nonce": nonce}

    async def finish(self, pending: dict[str, Any], *, code: str | None, state: str | None) -> dict[str, Any]:
        """Exchange the code; the ID token's verified claims, completed from userinfo when needed."""
        expected_state = pending.get("state")
        if (
            not code
            or not state
            or not isinstance(expected_state, str)
            or not secrets.compare_digest(state, expected_state)
        ):
            raise OidcError(
                "This sign-in answer does not match a sign-in started here, or it was used already. "
                "Start again from the app."
            )
        document = await self.discover()
        # authlib's httpx client is built on httpx2 (authlib.integrations.httpx_client._compat), not
        # httpx: its transport errors are httpx2's. Uncaught, a timeout's TimeoutError cause read as
        # the database being down (503) and a cut connection as a bug (500).
        try:
            async with self._client() as client:
                token = await client.fetch_token(
                    document["token_endpoint"], code=code, code_verifier=pending.get("verifier")
                )
        except DocumentTooLarge as exc:
            raise _too_large(exc) from exc
        except (httpx2.TransportError, httpx2.HTTPStatusError) as exc:
            raise IdpUnreachable(no_answer_words(exc)) from exc
        except (httpx2.HTTPError, OAuthError, ValueError, KeyError) as exc:
            # The provider answered, with an error (invalid_grant: the code was used or expired) or
            # something that is not a token.
            raise OidcError(CODE_REFUSED) from exc
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise OidcError("The campus sign-in service sent no ID token; ask IT to check the setup.")
        claims = await self.verify(document, id_token, str(pending.get("nonce") or ""))
        wanted = [c for c in (self.settings.oidc_student_id_claim, self.settings.oidc_admit_claim) if c]
        if any(name not in claims for name in wanted) and document.get("userinfo_endpoint"):
            claims = {
                **await self._userinfo(document["userinfo_endpoint"], str(token.get("access_token")), claims),
                **claims,
            }
        return claims

    async def _userinfo(self, url: str, access_token: str, claims: dict[str, Any]) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=IDP_TIMEOUT_SECONDS) as http:
                response = await read_document(
                    http,
                    "GET",
                    url,
                    headers={"Authorization": f"Bearer {access_token}"},
                    limit=self._limit("userinfo answer"),
                )
                response.raise_for_status()
                info: dict[str, Any] = response.json()
        except DocumentTooLarge as exc:
            raise _too_large(exc) from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise OidcError("The campus sign-in service did not send your profile. Try again.") from exc
        if info.get("sub") != claims.get("sub"):
            # OIDC Core 5.3.2: a userinfo answer for another subject must not be used.
            raise OidcError("The campus sign-in service sent the profile of someone else; ask IT to check the setup.")
        return info

    async def _key_set(self, jwks_uri: str, kid: str | None) -> KeySet:
        global jwks_fetches
        keys = _keys.get(jwks_uri)
        if keys is not None and (kid is None or any(key.kid == kid for key in keys.keys)):
            return keys
        try:
            async with httpx.AsyncClient(timeout=IDP_TIMEOUT_SECONDS) as http:
                response = await read_document(http, "GET", jwks_uri, limit=self._limit("keys (JWKS)"))
                response.raise_for_status()
                keys = KeySet.import_key_set(self._few_keys(response.json()))
        except DocumentTooLarge as exc:
            raise _too_large(exc) from exc
        except (httpx.HTTPError, ValueError, JoseError) as exc:
            raise IdpUnreachable(UNREACHABLE) from exc
        jwks_fetches += 1
        _keys[jwks_uri] = keys
        return keys

    def _limit(self, document: str) -> DocumentLimit:
        return sign_in_limit(self.settings, f"the campus sign-in service's {document}")

    def _few_keys(self, jwks: Any) -> Any:
        """The JWKS, unless it lists more keys than ``jwks_max_keys`` (each is parsed and kept)."""
        listed = jwks.get("keys") if isinstance(jwks, dict) else None
        limit = self.settings.jwks_max_keys
        if isinstance(listed, list) and len(listed) > limit:
            log.warning(
                "the campus sign-in service's keys (JWKS) list %d keys, more than the %d this server takes, so "
                "they were not read. If that is right, raise CAMPUS_MCP_JWKS_MAX_KEYS; if not, tell whoever "
                "runs the sign-in service.",
                len(listed),
                limit,
            )
            raise OidcError(TOO_LARGE)
        return jwks

    async def verify(self, document: dict[str, Any], id_token: str, nonce: str) -> dict[str, Any]:
        """The ID token's claims once its signature, issuer, audience, expiry and nonce check out."""
        header = _header(id_token)
        keys = await self._key_set(document["jwks_uri"], header.get("kid"))
        try:
            decoded = jwt.decode(id_token, keys, algorithms=["RS256", "ES256", "PS256", "EdDSA"])
        except BadSignatureError as exc:
            raise OidcError(
                "The sign-in answer is not signed by the campus sign-in service, so it was refused. "
                "Start again from the app; if it happens again, tell IT."
            ) from exc
        except (JoseError, ValueError) as exc:
            raise OidcError("The campus sign-in service sent an ID token that does not check out.") from exc
        registry = jwt.JWTClaimsRegistry(
            leeway=CLOCK_SKEW,
            iss={"essential": True, "value": document["issuer"]},
            aud={"essential": True, "value": self.settings.oidc_client_id},
            sub={"essential": True},
            exp={"essential": True},
            nonce={"essential": True, "value": nonce},
        )
        try:
            registry.validate(decoded.claims)
        except ExpiredTokenError as exc:
            raise OidcError("The sign-in answer has expired. Start again from the app.") from exc
        except (InvalidClaimError, MissingClaimError) as exc:
            raise OidcError(_claim_problem(str(getattr(exc, "claim", "")))) from exc
        except JoseError as exc:
            raise OidcError("The campus sign-in service sent an ID token that does not check out.") from exc
        if not self._for_this_client(decoded.claims):
            raise OidcError(_claim_problem("aud"))
        return dict(decoded.claims)

    def _for_this_client(self, claims: dict[str, Any]) -> bool:
        """OpenID Connect Core 3.1.3.7: a token for several audiences must name this client as its
        authorized party (``azp``), and an ``azp``, when there is one, must be this client. Without
        that, another application's ID token that lists this one among its audiences would sign
        its holder in here."""
        audiences = claims.get("aud")
        several = isinstance(audiences, list) and len(set(audiences)) > 1
        azp = claims.get("azp")
        if several or azp is not None:
            return azp == self.settings.oidc_client_id
        return True

    def admitted(self, claims: dict[str, Any]) -> None:
        """Raise :class:`OidcRefused` unless the admit claim holds an admitted value."""
        name = self.settings.oidc_admit_claim
        if not name:
            return
        admitted = {value.lower() for value in self.settings.oidc_admit_values}
        if not any(value.lower() in admitted for value in claim_values(claims.get(name))):
            raise OidcRefused(
                "Your campus account signed in, but this service is for students, and your account "
                f"is not listed as one ({name} does not include "
                f"{' or '.join(sorted(self.settings.oidc_admit_values))}). If you are a student, ask "
                f"{self.settings.oidc_help_contact} to check your account's affiliation."
            )

    def campus_id(self, claims: dict[str, Any]) -> str:
        """The student id claim, whole (``campus_id``): a string is one id, never split at spaces."""
        name = self.settings.oidc_student_id_claim
        value = claims.get(name)
        values = [str(v) for v in (value if isinstance(value, list) else [value]) if _id_value(v)]
        try:
            return checked_campus_id(values, source=f"the {name} claim", settings=self.settings)
        except CampusIdRefused as exc:
            raise OidcRefused(str(exc)) from exc

    async def student(self, session: AsyncSession, claims: dict[str, Any]) -> Student:
        """The admitted person's student record (created or attached now); OidcRefused otherwise."""
        self.admitted(claims)
        campus_id = self.campus_id(claims)
        email = claims.get("email") if isinstance(claims.get("email"), str) else None
        try:
            return await oidc_student(
                session,
                str(claims["iss"]),
                str(claims["sub"]),
                campus_id=campus_id,
                display_name=str(claims.get("name") or campus_id),
                email=email,
            )
        except IdentityRefused as exc:
            raise OidcRefused(f"{exc} Ask {self.settings.oidc_help_contact}.") from exc

    async def logout_url(self, post_logout_redirect: str) -> str | None:
        """Where to end the provider's session too (RP-initiated logout), when it offers that."""
        try:
            document = await self.discover()
        except OidcError:
            return None  # the local sign-out happened; the provider's session ends on its own
        endpoint = document.get("end_session_endpoint")
        if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
            return None
        query = urlencode({"client_id": self.settings.oidc_client_id, "post_logout_redirect_uri": post_logout_redirect})
        return endpoint + ("&" if "?" in endpoint else "?") + query


def no_answer_words(exc: BaseException) -> str:
    """The student's words for a campus sign-in service that did not answer (OpenID Connect's token
    endpoint, CAS's validation, the SAML metadata): it took too long, or the connection was refused,
    cut or answered with a server error. Said as the sign-in service's trouble, never the database's."""
    timed_out = isinstance(exc, (TimeoutError, httpx.TimeoutException, httpx2.TimeoutException))
    return NO_ANSWER_IN_TIME if timed_out else CONNECTION_CUT


def _too_large(exc: DocumentTooLarge) -> OidcError:
    """The student's words for a document past its limit; IT's (which, the limit, the setting) logged."""
    log.warning("%s", exc)
    return OidcError(TOO_LARGE)


def _claim_problem(claim: str) -> str:
    if claim == "iss":
        return (
            "The sign-in answer came from another identity provider than the one this campus uses, so "
            "it was refused. Start again from the app."
        )
    if claim == "aud":
        return "The sign-in answer was made for another application, so it was refused. Start again from the app."
    if claim == "nonce":
        return (
            "The sign-in answer belongs to another sign-in (or was used already), so it was refused. "
            "Start again from the app."
        )
    return "The campus sign-in service sent an ID token that does not check out."
