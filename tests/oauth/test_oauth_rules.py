"""Each rule of the authorization server, over real HTTP on loopback (seed 000, seed 002, issue 4)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from campus_mcp.base.db import utcnow
from campus_mcp.jobs.scheduler import run_job
from campus_mcp.oauth.cleanup import JOB_ID
from campus_mcp.oauth.models import AuthorizationCode, OAuthClient, OAuthToken
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    BrowserStudent,
    ScopeProbe,
    callback_params,
    parse_forms,
    probe_campus_on_loopback,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from sqlalchemy import select, update

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "rules-test", "version": "1"},
    },
}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@dataclass
class Live:
    base: str
    campus: CampusHarness
    http: httpx.AsyncClient

    @property
    def mcp_url(self) -> str:
        return self.base + "/api/mcp"

    async def register(self, redirect_uris: list[str] | None = None, **extra: Any) -> httpx.Response:
        body = {
            "redirect_uris": [TEST_REDIRECT_URI] if redirect_uris is None else redirect_uris,
            "client_name": "Rules App",
            **extra,
        }
        return await self.http.post(self.base + "/api/oauth/register", json=body)

    async def client_id(self) -> str:
        response = await self.register()
        assert response.status_code == 201, response.text
        return str(response.json()["client_id"])

    def authorize_url(self, client_id: str, challenge: str, **params: str) -> str:
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": TEST_REDIRECT_URI,
            "scope": "probe:public probe:read probe:write",
            "state": "s1",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": self.mcp_url,
        }
        query.update(params)
        return self.base + "/api/oauth/authorize?" + urlencode({k: v for k, v in query.items() if v != ""})

    async def code(self, client_id: str, challenge: str, student: BrowserStudent | None = None, **params: str) -> str:
        landed = callback_params(
            await (student or BrowserStudent("student1", "demo")).approve(
                self.authorize_url(client_id, challenge, **params)
            )
        )
        assert "code" in landed, landed
        return landed["code"]

    async def exchange(self, client_id: str, code: str, verifier: str, **extra: str) -> httpx.Response:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": TEST_REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": self.mcp_url,
            **extra,
        }
        return await self.http.post(self.base + "/api/oauth/token", data=data)

    async def tokens(self, student: BrowserStudent | None = None) -> tuple[str, dict[str, Any]]:
        client_id = await self.client_id()
        verifier, challenge = pkce()
        response = await self.exchange(client_id, await self.code(client_id, challenge, student), verifier)
        assert response.status_code == 200, response.text
        return client_id, response.json()

    async def refresh(self, client_id: str, refresh_token: str, **extra: str) -> httpx.Response:
        data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id, **extra}
        return await self.http.post(self.base + "/api/oauth/token", data=data)

    async def mcp_status(self, access_token: str) -> int:
        response = await self.http.post(
            self.mcp_url,
            json=INITIALIZE,
            headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"},
        )
        return response.status_code


@pytest.fixture
async def live(campus_factory: CampusFactory, request: pytest.FixtureRequest) -> AsyncIterator[Live]:
    overrides: dict[str, Any] = getattr(request, "param", {})
    async with (
        probe_campus_on_loopback(campus_factory, **overrides) as (base, campus),
        httpx.AsyncClient(timeout=30) as http,
    ):
        yield Live(base=base, campus=campus, http=http)


# discovery ---------------------------------------------------------------------------------


async def test_discovery_from_the_401(live: Live) -> None:
    unauthorized = await live.http.post(live.mcp_url, json=INITIALIZE)
    assert unauthorized.status_code == 401
    challenge = unauthorized.headers["www-authenticate"]
    prm_url = f"{live.base}/.well-known/oauth-protected-resource/api/mcp"
    assert f'resource_metadata="{prm_url}"' in challenge
    assert 'scope="probe:public probe:read probe:write"' in challenge

    for url in (prm_url, f"{live.base}/.well-known/oauth-protected-resource"):
        prm = (await live.http.get(url)).json()
        ProtectedResourceMetadata.model_validate(prm)  # the SDK client's own model accepts it
        assert prm["resource"] == live.mcp_url
        assert prm["authorization_servers"] == [live.base]

    metadata = (await live.http.get(f"{live.base}/.well-known/oauth-authorization-server")).json()
    OAuthMetadata.model_validate(metadata)
    AuthorizationServerMetadata(metadata).validate()  # authlib's RFC 8414 checks
    assert metadata["issuer"] == live.base
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["scopes_supported"] == ["probe:public", "probe:read", "probe:write"]
    assert metadata["authorization_response_iss_parameter_supported"] is True


# registration and redirect URIs ------------------------------------------------------------


async def test_redirect_uri_rules(live: Live) -> None:
    for allowed in ("https://app.example/cb", "http://localhost:3000/cb", "http://127.0.0.1/callback"):
        response = await live.register([allowed])
        assert response.status_code == 201, (allowed, response.text)
        body = response.json()
        assert body["token_endpoint_auth_method"] == "none"
        assert "client_secret" not in body
    for refused in ("http://app.example/cb", "http://192.168.1.20/cb", "https://app.example/cb#frag", "ftp://x/y"):
        response = await live.register([refused])
        assert response.status_code == 400, refused
        assert response.json()["error"] == "invalid_redirect_uri", (refused, response.text)
    assert (await live.register([])).json()["error"] == "invalid_redirect_uri"


async def test_a_redirect_uri_that_was_not_registered_is_never_redirected_to(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    url = live.authorize_url(client_id, challenge, redirect_uri="https://evil.example/cb")
    response = await live.http.get(url)
    assert response.status_code == 400
    assert "evil.example" not in response.headers.get("location", "")
    assert "cannot sign in" in response.text


async def test_a_secret_asked_for_is_not_given(live: Live) -> None:
    response = await live.register(token_endpoint_auth_method="client_secret_post")
    assert response.status_code == 201
    assert response.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in response.json()


# the authorization request -----------------------------------------------------------------


async def _error_redirect(live: Live, url: str) -> dict[str, str]:
    """The parameters of the error redirect back to the app (after signing in)."""
    return callback_params(await BrowserStudent("student1", "demo").approve(url))


async def test_pkce_s256_is_required(live: Live) -> None:
    client_id = await live.client_id()
    verifier, _ = pkce()
    missing = await live.http.get(live.authorize_url(client_id, "", code_challenge_method=""))
    landed = callback_params(missing.headers["location"])
    assert landed["error"] == "invalid_request" and "PKCE" in landed["error_description"]
    assert landed["iss"] == live.base and landed["state"] == "s1"
    plain = await live.http.get(live.authorize_url(client_id, verifier, code_challenge_method="plain"))
    assert callback_params(plain.headers["location"])["error"] == "invalid_request"


async def test_unknown_scope_is_invalid_scope(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    response = await live.http.get(live.authorize_url(client_id, challenge, scope="probe:read grades:write"))
    landed = callback_params(response.headers["location"])
    assert landed["error"] == "invalid_scope"
    assert "grades:write" in landed["error_description"]


async def test_wrong_resource_is_refused_at_both_endpoints(live: Live) -> None:
    client_id = await live.client_id()
    verifier, challenge = pkce()
    elsewhere = "https://elsewhere.example/api/mcp"
    response = await live.http.get(live.authorize_url(client_id, challenge, resource=elsewhere))
    landed = callback_params(response.headers["location"])
    assert landed["error"] == "invalid_target" and landed["iss"] == live.base

    code = await live.code(client_id, challenge)
    exchanged = await live.exchange(client_id, code, verifier, resource=elsewhere)
    assert exchanged.status_code == 400 and exchanged.json()["error"] == "invalid_target"


async def test_the_redirect_carries_iss(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    location = await BrowserStudent("student1", "demo").approve(live.authorize_url(client_id, challenge))
    landed = callback_params(location)
    assert location.startswith(TEST_REDIRECT_URI)
    assert landed["iss"] == live.base and landed["state"] == "s1" and landed["code"]


async def test_deny_sends_access_denied(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    landed = callback_params(
        await BrowserStudent("student1", "demo", deny=True).approve(live.authorize_url(client_id, challenge))
    )
    assert landed["error"] == "access_denied" and "code" not in landed


# the code ----------------------------------------------------------------------------------


async def test_wrong_verifier_burns_the_code(live: Live) -> None:
    client_id = await live.client_id()
    verifier, challenge = pkce()
    code = await live.code(client_id, challenge)
    wrong = await live.exchange(client_id, code, pkce()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    right_too_late = await live.exchange(client_id, code, verifier)
    assert right_too_late.status_code == 400 and right_too_late.json()["error"] == "invalid_grant"


async def test_a_code_works_once_and_replaying_it_revokes_its_tokens(live: Live) -> None:
    client_id = await live.client_id()
    verifier, challenge = pkce()
    code = await live.code(client_id, challenge)
    first = await live.exchange(client_id, code, verifier)
    assert first.status_code == 200
    token = first.json()
    assert token["token_type"].lower() == "bearer" and token["expires_in"] == 3600
    assert await live.mcp_status(token["access_token"]) == 200

    replay = await live.exchange(client_id, code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert await live.mcp_status(token["access_token"]) == 401


async def test_a_code_is_bound_to_its_client(live: Live) -> None:
    client_id, other = await live.client_id(), await live.client_id()
    verifier, challenge = pkce()
    code = await live.code(client_id, challenge)
    stolen = await live.exchange(other, code, verifier)
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"


async def test_an_expired_code_is_refused(live: Live) -> None:
    client_id = await live.client_id()
    verifier, challenge = pkce()
    code = await live.code(client_id, challenge)
    async with live.campus.sessions() as session, session.begin():
        await session.execute(update(AuthorizationCode).values(expires_at=utcnow() - timedelta(seconds=1)))
    late = await live.exchange(client_id, code, verifier)
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"


async def test_a_metadata_document_client_on_a_private_address_sees_why(live: Live) -> None:
    _, challenge = pkce()
    response = await live.http.get(live.authorize_url("https://10.0.0.7/oauth/client.json", challenge))
    assert response.status_code == 400 and "location" not in response.headers
    assert "not public" in response.text


# refresh -----------------------------------------------------------------------------------


async def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_family(live: Live) -> None:
    client_id, first = await live.tokens()
    rotated = await live.refresh(client_id, first["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    assert await live.mcp_status(second["access_token"]) == 200

    reused = await live.refresh(client_id, first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    # The whole family is gone: the rotated tokens too.
    assert await live.mcp_status(second["access_token"]) == 401
    assert (await live.refresh(client_id, second["refresh_token"])).json()["error"] == "invalid_grant"


async def test_refresh_cannot_widen_the_scope(live: Live) -> None:
    client_id, first = await live.tokens(BrowserStudent("student1", "demo", choose={"probe:read"}))
    wider = await live.refresh(client_id, first["refresh_token"], scope="probe:public probe:read probe:write")
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope"


# tokens ------------------------------------------------------------------------------------


async def test_the_token_holds_exactly_the_checked_scopes(live: Live) -> None:
    _, token = await live.tokens(BrowserStudent("student1", "demo", choose={"probe:write"}))
    assert token["scope"] == "probe:public probe:write"


async def test_a_token_for_another_audience_is_refused(live: Live) -> None:
    client_id = await live.client_id()
    store = OAuthStore(live.campus.sessions)
    await store.save_tokens(
        access_token="cmcp_at_other-audience",
        refresh_token=None,
        client_id=client_id,
        user_id=1,
        scope="probe:public probe:read",
        resource="https://other.example/api/mcp",
        family_id="f-other",
    )
    await store.save_tokens(
        access_token="cmcp_at_this-audience",
        refresh_token=None,
        client_id=client_id,
        user_id=1,
        scope="probe:public probe:read",
        resource=live.mcp_url,
        family_id="f-this",
    )
    assert await live.mcp_status("cmcp_at_other-audience") == 401
    assert await live.mcp_status("cmcp_at_this-audience") == 200


async def test_an_expired_token_is_refused(live: Live) -> None:
    _, token = await live.tokens()
    async with live.campus.sessions() as session, session.begin():
        await session.execute(update(OAuthToken).values(access_expires_at=utcnow() - timedelta(seconds=1)))
    response = await live.http.post(
        live.mcp_url, json=INITIALIZE, headers={"Authorization": f"Bearer {token['access_token']}"}
    )
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_a_token_works_on_the_mcp_endpoint_only(live: Live) -> None:
    _, token = await live.tokens()
    response = await live.http.get(
        live.base + "/dashboard", headers={"Authorization": f"Bearer {token['access_token']}"}
    )
    assert response.status_code == 303 and response.headers["location"].startswith("/login")


async def test_credentials_are_stored_hashed(live: Live) -> None:
    _, token = await live.tokens()
    async with live.campus.sessions() as session:
        rows = (await session.execute(select(OAuthToken))).scalars().all()
    stored = json.dumps([[r.access_token_hash, r.refresh_token_hash] for r in rows])
    assert token["access_token"] not in stored and token["refresh_token"] not in stored
    assert hashlib.sha256(token["access_token"].encode()).hexdigest() in stored


async def test_revocation_ends_the_grant(live: Live) -> None:
    client_id, token = await live.tokens()
    response = await live.http.post(
        live.base + "/api/oauth/revoke",
        data={"token": token["refresh_token"], "token_type_hint": "refresh_token", "client_id": client_id},
    )
    assert response.status_code == 200
    assert await live.mcp_status(token["access_token"]) == 401
    assert (await live.refresh(client_id, token["refresh_token"])).json()["error"] == "invalid_grant"
    # RFC 7009: an unknown token is not an error.
    unknown = await live.http.post(live.base + "/api/oauth/revoke", data={"token": "nope", "client_id": client_id})
    assert unknown.status_code == 200


# consent -----------------------------------------------------------------------------------


async def test_consent_boxes_start_as_specified_and_remember_the_last_choice(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    first = BrowserStudent("student1", "demo", choose={"probe:write"})
    await first.approve(live.authorize_url(client_id, challenge))
    assert first.last_consent is not None
    # Reads start checked, writes unchecked; the always-on scope has no box.
    assert first.last_consent.boxes == {"probe:read": True, "probe:write": False}
    assert "probe:public" in first.last_consent.html

    again = BrowserStudent("student1", "demo")
    await again.approve(live.authorize_url(client_id, challenge))
    assert again.last_consent is not None
    assert again.last_consent.boxes == {"probe:read": False, "probe:write": True}


async def test_the_consent_page_is_strict(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    async with httpx.AsyncClient(timeout=30) as browser:
        login_page = await browser.get(live.authorize_url(client_id, challenge), follow_redirects=True)
        form = parse_forms(login_page.text)[-1]
        data = {f.name: f.value for f in form.fields if f.kind == "hidden"} | {
            "username": "student1",
            "password": "demo",
        }
        consent = await browser.post(live.base + "/login", data=data, follow_redirects=True)
        assert consent.status_code == 200
        policy = consent.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert "script-src" not in policy and "unsafe-inline" not in policy
        forged = {f.name: f.value for f in parse_forms(consent.text)[-1].fields if f.kind == "hidden"}
        forged["csrf_token"] = "forged"
        forged["decision"] = "allow"
        refused = await browser.post(live.base + "/api/oauth/authorize", data=forged)
        assert refused.status_code == 403
        assert "location" not in refused.headers


async def test_legacy_read_scope_offers_every_read_scope(live: Live) -> None:
    client_id = await live.client_id()
    _, challenge = pkce()
    student = BrowserStudent("student1", "demo")
    await student.approve(live.authorize_url(client_id, challenge, scope="read"))
    assert student.last_consent is not None and student.last_consent.boxes == {"probe:read": True}


# sign-in -----------------------------------------------------------------------------------


@pytest.mark.parametrize("live", [{"login_max_failures": 3}], indirect=True)
async def test_sign_in_is_rate_limited_per_address(live: Live) -> None:
    async with httpx.AsyncClient(timeout=30) as browser:
        page = await browser.get(live.base + "/login")
        csrf = next(f.value for f in parse_forms(page.text)[0].fields if f.name == "csrf_token")
        for _ in range(3):
            wrong = await browser.post(
                live.base + "/login", data={"csrf_token": csrf, "username": "student1", "password": "guess"}
            )
            assert wrong.status_code == 401
        right = await browser.post(
            live.base + "/login", data={"csrf_token": csrf, "username": "student1", "password": "demo"}
        )
        assert right.status_code == 429
        assert "Too many failed sign-ins" in right.text and right.headers["retry-after"]


async def test_the_session_cookie_is_httponly_and_samesite(live: Live) -> None:
    async with httpx.AsyncClient(timeout=30) as browser:
        page = await browser.get(live.base + "/login")
        cookie = page.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        assert "secure" not in cookie  # served over http on loopback


# disconnect and cleanup --------------------------------------------------------------------


async def test_disconnect_revokes_every_token_of_the_app(live: Live) -> None:
    client_id, token = await live.tokens()
    async with httpx.AsyncClient(timeout=30, base_url=live.base) as browser:
        login = await browser.get("/login?next=/dashboard/settings")
        data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
        settings_page = await browser.post(
            "/login", data=data | {"username": "student1", "password": "demo"}, follow_redirects=True
        )
        assert 'id="connected-apps"' in settings_page.text
        assert "Rules App" in settings_page.text and "probe:read" in settings_page.text
        form = next(f for f in parse_forms(settings_page.text) if f.action.endswith("/disconnect"))
        fields = {f.name: f.value for f in form.fields}
        assert fields["client_id"] == client_id
        after = await browser.post(form.action, data=fields, follow_redirects=True)
        assert "Disconnected Rules App" in after.text and "No app can use your data" in after.text
    assert await live.mcp_status(token["access_token"]) == 401
    assert (await live.refresh(client_id, token["refresh_token"])).json()["error"] == "invalid_grant"


async def test_unused_self_registered_clients_are_deleted_after_a_day(live: Live) -> None:
    unused = await live.client_id()
    used, _ = await live.tokens()
    fresh = await live.client_id()
    async with live.campus.sessions() as session, session.begin():
        await session.execute(
            update(OAuthClient)
            .where(OAuthClient.client_id.in_([unused, used]))
            .values(created_at=utcnow() - timedelta(days=2))
        )
    job = live.campus.registry.jobs[JOB_ID]
    run = await run_job(job, live.campus.registry, live.campus.sessions)
    assert run.outcome == "ok" and run.items == 1
    async with live.campus.sessions() as session:
        left = set((await session.execute(select(OAuthClient.client_id))).scalars())
    assert unused not in left and {used, fresh} <= left


async def test_an_insecure_public_url_is_refused_with_what_to_fix(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(
        plugins=[], extra_plugins=[("probe", ScopeProbe())], public_url="http://campus.example"
    )
    async with campus.rest() as client:
        page = await client.get("/api/oauth/authorize")
        assert page.status_code == 503 and "CAMPUS_MCP_PUBLIC_URL" in page.text
        token = await client.post("/api/oauth/token", data={"grant_type": "authorization_code"})
        assert token.status_code == 503 and "https" in token.json()["error_description"]


def test_the_session_cookie_is_secure_behind_https() -> None:
    from campus_mcp.base.settings import Settings
    from campus_mcp.oauth.session import session_config

    config = session_config(Settings(public_url="https://calendar.campus.example", secret_key="k" * 40))
    assert config.secure and config.httponly and config.samesite == "lax"


async def test_no_token_reaches_the_log(live: Live, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    with caplog.at_level(logging.DEBUG):
        client_id, token = await live.tokens()
        refreshed = (await live.refresh(client_id, token["refresh_token"])).json()
    logged = "\n".join(record.getMessage() for record in caplog.records)
    # The capture saw the token requests themselves, so the absence below means something.
    assert "HTTP Request: POST" in logged, "the capture saw none of the token requests"
    for secret in (
        token["access_token"],
        token["refresh_token"],
        refreshed["access_token"],
        refreshed["refresh_token"],
    ):
        assert secret not in logged
