"""Sign-in with the campus identity provider over OpenID Connect (authlib's httpx client).

The authorization code flow with PKCE, a ``state`` and a ``nonce`` kept in the session; the ID
token's signature is checked against the provider's published keys, and its issuer, audience,
expiry and nonce against what this server expects. A student is known by (issuer, subject).
"""

from __future__ import annotations

import secrets
from typing import Any

import httpx
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.accounts import Student, oidc_student
from campus_mcp.settings import Settings

CALLBACK_PATH = "/login/oidc/callback"


class OidcError(Exception):
    """Why the identity provider sign-in failed, in words for the student."""


class OidcClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.issuer = settings.oidc_issuer.rstrip("/")
        self.redirect_uri = settings.base_url + CALLBACK_PATH

    def _client(self) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=self.settings.oidc_client_id,
            client_secret=self.settings.oidc_client_secret.get_secret_value() or None,
            scope="openid profile email",
            redirect_uri=self.redirect_uri,
            code_challenge_method="S256",
            timeout=10,
        )

    async def _discover(self) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                response = await http.get(self.issuer + "/.well-known/openid-configuration")
                response.raise_for_status()
                document: dict[str, Any] = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise OidcError("The campus sign-in service cannot be reached. Try again in a few minutes.") from exc
        if document.get("issuer", "").rstrip("/") != self.issuer:
            raise OidcError("The campus sign-in service describes a different issuer; ask IT to check the setup.")
        return document

    async def start(self) -> tuple[str, dict[str, str]]:
        """The provider's authorization URL, and what the callback needs (kept in the session)."""
        document = await self._discover()
        verifier = generate_token(64)
        nonce = secrets.token_urlsafe(24)
        async with self._client() as client:
            url, state = client.create_authorization_url(
                document["authorization_endpoint"], code_verifier=verifier, nonce=nonce
            )
        return url, {"state": state, "verifier": verifier, "nonce": nonce}

    async def finish(self, pending: dict[str, Any], *, code: str | None, state: str | None) -> dict[str, Any]:
        """Exchange the code and return the ID token's verified claims."""
        expected_state = pending.get("state")
        if (
            not code
            or not state
            or not isinstance(expected_state, str)
            or not secrets.compare_digest(state, expected_state)
        ):
            raise OidcError("The sign-in answer does not match a sign-in started here. Start again from the app.")
        document = await self._discover()
        try:
            async with self._client() as client:
                token = await client.fetch_token(
                    document["token_endpoint"], code=code, code_verifier=pending.get("verifier")
                )
            async with httpx.AsyncClient(timeout=10) as http:
                keys = (await http.get(document["jwks_uri"])).json()
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise OidcError("The campus sign-in service did not complete the sign-in. Try again.") from exc
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise OidcError("The campus sign-in service sent no ID token.")
        try:
            decoded = jwt.decode(id_token, KeySet.import_key_set(keys))
            registry = jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": document["issuer"]},
                aud={"essential": True, "value": self.settings.oidc_client_id},
                sub={"essential": True},
                exp={"essential": True},
                nonce={"essential": True, "value": str(pending.get("nonce") or "")},
            )
            registry.validate(decoded.claims)
        except (JoseError, ValueError) as exc:
            raise OidcError("The campus sign-in service sent an ID token that does not check out.") from exc
        claims: dict[str, Any] = dict(decoded.claims)
        claims["iss"] = document["issuer"]
        return claims

    async def student(self, session: AsyncSession, claims: dict[str, Any]) -> Student:
        username = claims.get("preferred_username") or (claims.get("email") or "").split("@")[0]
        return await oidc_student(
            session,
            str(claims["iss"]),
            str(claims["sub"]),
            username=str(username or ""),
            display_name=str(claims.get("name") or username or ""),
            email=claims.get("email") if isinstance(claims.get("email"), str) else None,
        )
