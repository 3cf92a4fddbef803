"""The host's pages against forged posts and stored hostile values.

Sign-out ends every session of the student (session generation), so it takes the session's CSRF
token like every other form. The consent page's Content-Security-Policy names the app's redirect
origin; a client registered before the redirect-URI rules may hold one with ``;`` or quotes, and
none of it may reach the header.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import httpx
from campus_mcp.oauth.pages import content_security_policy
from campus_mcp.oauth.store import ClientRecord, OAuthStore
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import ScopeProbe, parse_forms

# A redirect URI the registration refuses today and an older server accepted: its origin
# (everything up to the first slash) carries a directive and a source of its own.
OLD_HOSTILE_URI = "https://app.example;script-src 'unsafe-inline' *"


async def _campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(plugins=[], extra_plugins=[("probe", ScopeProbe())], demo=True)


async def _sign_in(client: Any, next_path: str = "/dashboard") -> httpx.Response:
    page = await client.get("/login", params={"next": next_path})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    response: httpx.Response = await client.post(
        "/login", data=data | {"username": "student1", "password": "demo"}, follow_redirects=False
    )
    return response


def _sign_out_form(html: str) -> dict[str, str]:
    form = next(form for form in parse_forms(html) if form.action == "/logout")
    return {f.name: f.value for f in form.fields}


async def test_sign_out_needs_the_token_of_the_session(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        assert (await _sign_in(client)).status_code == 303
        dashboard = await client.get("/dashboard")
        fields = _sign_out_form(dashboard.text)
        assert fields.get("csrf_token"), "the Sign out form carries the session's token"
        # A post from another page: no token, or a made-up one. The student stays signed in.
        for data in ({}, {"csrf_token": "forged"}):
            refused = await client.post("/logout", data=data, follow_redirects=False)
            assert refused.status_code == 403, refused.text
            assert "The sign-out form expired" in refused.text
            assert "default-src 'none'" in refused.headers["content-security-policy"]
            assert (await client.get("/dashboard", follow_redirects=False)).status_code == 200
        # The refusal offers a form that works.
        retry = _sign_out_form(refused.text)
        signed_out = await client.post("/logout", data=retry, follow_redirects=False)
        assert signed_out.status_code == 303 and signed_out.headers["location"] == "/"
        gone = await client.get("/dashboard", follow_redirects=False)
        assert gone.status_code == 303 and gone.headers["location"].startswith("/login")


async def test_every_signed_in_page_has_a_working_sign_out(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        await _sign_in(client)
        settings = await client.get("/dashboard/settings")
        assert settings.status_code == 200
        token = _sign_out_form(settings.text)["csrf_token"]
        assert token == _sign_out_form((await client.get("/dashboard")).text)["csrf_token"]
        assert (await client.post("/logout", data={"csrf_token": token}, follow_redirects=False)).status_code == 303


async def test_a_signed_out_visitor_is_sent_home(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        response = await client.post("/logout", follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/"


def test_the_policy_keeps_only_plain_origins() -> None:
    policy = content_security_policy(
        [
            "https://app.example",
            "http://127.0.0.1:33418",
            "https://[::1]:8443",
            "https://app.example;script-src *",
            "https://app.example 'unsafe-inline'",
            'https://a"b.example',
            "https://app.example,https://evil.example",
            "https://user@app.example",
            "https://",
            "'none'",
            "*",
        ]
    )
    assert "form-action 'self' http://127.0.0.1:33418 https://[::1]:8443 https://app.example;" in policy
    assert policy.count(";") == 5  # six directives, none added by a target
    assert "script-src" not in policy and "unsafe-inline" not in policy and "evil" not in policy
    assert "*" not in policy and "@" not in policy and '"' not in policy


async def test_a_stored_hostile_redirect_uri_does_not_reach_the_consent_header(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    store = OAuthStore(campus.sessions)
    await store.save_client(
        ClientRecord(
            client_id="old-client",
            kind="registered",
            client_name="Old App",
            redirect_uris=(OLD_HOSTILE_URI,),
            scope="probe:read",
        )
    )
    query = {
        "response_type": "code",
        "client_id": "old-client",
        "redirect_uri": OLD_HOSTILE_URI,
        "scope": "probe:read",
        "state": "s1",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "resource": campus.settings.mcp_url,
    }
    async with campus.rest() as client:
        await _sign_in(client)
        consent = await client.get("/api/oauth/authorize?" + urlencode(query), follow_redirects=False)
    policy = consent.headers["content-security-policy"]
    assert "script-src" not in policy and "unsafe-inline" not in policy, policy
    assert "form-action 'self';" in policy, policy
    assert policy.count(";") == 5, policy
