"""Signing in with the campus identity provider over OpenID Connect.

The identity provider is a small fake served by the test on loopback: discovery, an authorize
endpoint that approves at once, a token endpoint that checks PKCE and signs an ID token, and
its keys. The campus server uses authlib's client against it over real HTTP.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from campus_mcp.accounts import Student
from campus_mcp.oauth import oidc
from campus_mcp.oauth.testkit import free_port, serve_on_loopback
from campus_mcp.testing import CampusFactory
from joserfc import jwt
from joserfc.jwk import ECKey
from litestar import Litestar, Request, get, post
from litestar.response import Redirect
from sqlalchemy import select


def fake_identity_provider(
    issuer: str, *, nonce_override: str | None = None, token_endpoint: str | None = None
) -> Litestar:
    key = ECKey.generate_key("P-256", parameters={"kid": "idp-1"}, private=True)
    pending: dict[str, dict[str, str]] = {}

    @get("/.well-known/openid-configuration")
    async def discovery() -> dict[str, Any]:
        return {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": token_endpoint or f"{issuer}/token",
            "jwks_uri": f"{issuer}/jwks",
        }

    @get("/authorize")
    async def authorize(request: Request[Any, Any, Any]) -> Redirect:
        query = request.query_params
        pending["the-code"] = {"nonce": query["nonce"], "challenge": query["code_challenge"]}
        target = query["redirect_uri"] + "?" + urlencode({"code": "the-code", "state": query["state"]})
        return Redirect(target, status_code=302)

    @post("/token")
    async def token(request: Request[Any, Any, Any]) -> dict[str, Any]:
        form = await request.form()
        grant = pending.pop(str(form["code"]))
        digest = hashlib.sha256(str(form["code_verifier"]).encode()).digest()
        assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == grant["challenge"]
        now = int(time.time())
        claims = {
            "iss": issuer,
            "aud": "campus-mcp",
            "sub": "idp-subject-42",
            "iat": now,
            "exp": now + 300,
            "nonce": nonce_override or grant["nonce"],
            "preferred_username": "ada.lovelace",
            "name": "Ada Lovelace",
            "email": "ada@campus.example",
        }
        id_token = jwt.encode({"alg": "ES256", "kid": "idp-1"}, claims, key)
        return {"access_token": "idp-access", "token_type": "Bearer", "expires_in": 300, "id_token": id_token}

    @get("/jwks")
    async def jwks() -> dict[str, Any]:
        return {"keys": [key.as_dict(private=False)]}

    return Litestar([discovery, authorize, token, jwks])


@pytest.fixture
async def servers(campus_factory: CampusFactory, request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, Any]]:
    idp_port, port = free_port(), free_port()
    issuer = f"http://127.0.0.1:{idp_port}"
    campus = await campus_factory(
        plugins=[],
        public_url=f"http://127.0.0.1:{port}",
        oidc_issuer=issuer,
        oidc_client_id="campus-mcp",
        oidc_client_secret="idp-secret",
    )
    idp = fake_identity_provider(issuer, nonce_override=getattr(request, "param", None))
    async with serve_on_loopback(idp, idp_port), serve_on_loopback(campus.app, port) as base:
        yield base, campus


async def test_sign_in_with_the_identity_provider(servers: tuple[str, Any]) -> None:
    base, campus = servers
    async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        login = await browser.get(f"{base}/login?next=/dashboard/settings")
        assert "Sign in with your campus account" in login.text
        landed = await browser.get(f"{base}/login/oidc?next=/dashboard/settings")
        assert str(landed.url) == f"{base}/dashboard/settings"
        assert "Signed in as Ada Lovelace" in landed.text
    async with campus.sessions() as session:
        student = (await session.execute(select(Student).where(Student.username == "ada.lovelace"))).scalar_one()
    assert student.oidc_subject == "idp-subject-42" and student.password_hash is None
    assert student.email == "ada@campus.example"


@pytest.mark.parametrize("servers", ["not-the-nonce"], indirect=True)
async def test_an_id_token_with_the_wrong_nonce_is_refused(servers: tuple[str, Any]) -> None:
    base, _ = servers
    async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        landed = await browser.get(f"{base}/login/oidc?next=/dashboard")
        assert landed.status_code == 400
        assert "belongs to another sign-in" in landed.text  # words for the student (issue 26.1)
        assert (await browser.get(f"{base}/dashboard")).url.path == "/login"


async def test_the_campus_button_keeps_every_parameter_of_next(servers: tuple[str, Any]) -> None:
    # An MCP client's authorize URL has its own &state=...: it must come back whole after the IdP.
    base, _ = servers
    wanted = "/dashboard/settings?tab=apps&state=abc"
    async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        login = await browser.get(f"{base}/login", params={"next": wanted})
        href = login.text.split('<p><a href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        landed = await browser.get(base + href)
        assert landed.url.path == "/dashboard/settings"
        assert dict(landed.url.params) == {"tab": "apps", "state": "abc"}


# --- the provider's token endpoint fails (issue 35.13) -------------------------------------------


@contextlib.asynccontextmanager
async def faulty_token_endpoint(fault: str) -> AsyncIterator[str]:
    """A token endpoint on loopback that cuts each connection once the request has arrived
    (``drop``), never answers (``hang``), or refuses the code as a provider does (``refuse``)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)  # the token request
        if fault == "refuse":
            body = json.dumps({"error": "invalid_grant", "error_description": "code expired"}).encode()
            head = f"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            writer.write(head.encode() + body)
            await writer.drain()
        elif fault == "hang":
            await reader.read()  # until the campus gives up and closes its side
        writer.close()

    port = free_port()
    server = await asyncio.start_server(answer, "127.0.0.1", port)
    async with server:
        yield f"http://127.0.0.1:{port}/token"


TOKEN_FAULTS = {
    "drop": (502, "The campus sign-in service broke off the connection"),
    "hang": (502, "The campus sign-in service did not answer in time"),
    "refuse": (400, "The campus sign-in service did not complete the sign-in. Start again from the app."),
}


@pytest.mark.parametrize("fault", sorted(TOKEN_FAULTS))
async def test_a_token_endpoint_that_drops_hangs_or_refuses_gets_a_page_naming_the_campus_sign_in(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    # A short wait for the hanging endpoint, so the test does not sit out the ten seconds.
    monkeypatch.setattr(oidc, "IDP_TIMEOUT_SECONDS", 1.0)
    idp_port, port = free_port(), free_port()
    issuer = f"http://127.0.0.1:{idp_port}"
    campus = await campus_factory(
        plugins=[], public_url=f"http://127.0.0.1:{port}", oidc_issuer=issuer, oidc_client_id="campus-mcp"
    )
    async with (
        faulty_token_endpoint(fault) as token_url,
        serve_on_loopback(fake_identity_provider(issuer, token_endpoint=token_url), idp_port),
        serve_on_loopback(campus.app, port) as base,
        httpx.AsyncClient(timeout=30, follow_redirects=True) as browser,
    ):
        landed = await browser.get(f"{base}/login/oidc?next=/dashboard")
        status, words = TOKEN_FAULTS[fault]
        assert landed.status_code == status, landed.text
        assert landed.headers["content-type"].startswith("text/html")
        assert "<h1>Sign-in failed</h1>" in landed.text and words in landed.text
        assert "database" not in landed.text.lower()
        assert (await browser.get(f"{base}/dashboard")).url.path == "/login"
