"""CORS for browser clients (issue 14.5), over real HTTP on loopback, preflights included.

A web-based MCP inspector at another origin reads the OAuth metadata and the server card,
registers, trades its code and revokes its token; the pages that use the session cookie never
answer another origin; ``/api/mcp`` answers only the origins the DNS-rebinding guard trusts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx
import pytest
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    BrowserStudent,
    authorization_request,
    callback_params,
    parse_forms,
    probe_campus_on_loopback,
    register_app,
)

INSPECTOR = "http://localhost:6274"  # the MCP Inspector's page: a loopback origin the guard trusts
ELSEWHERE = "https://inspector.example.org"  # any other site
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cors", "version": "1"}},
}


@dataclass
class Served:
    base: str
    http: httpx.AsyncClient

    async def preflight(self, path: str, origin: str, method: str = "GET") -> httpx.Response:
        return await self.http.options(
            self.base + path,
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
            },
        )


@pytest.fixture
async def served(campus_factory: CampusFactory) -> AsyncIterator[Served]:
    async with probe_campus_on_loopback(campus_factory) as (base, _campus), httpx.AsyncClient(timeout=30) as http:
        yield Served(base, http)


def assert_open(response: httpx.Response) -> None:
    assert response.headers.get("access-control-allow-origin") == "*", dict(response.headers)
    assert "access-control-allow-credentials" not in response.headers


def assert_closed(response: httpx.Response) -> None:
    leaked = {k: v for k, v in response.headers.items() if k.lower().startswith("access-control-")}
    assert not leaked, f"{response.request.method} {response.request.url}: {leaked}"


async def test_an_inspector_on_another_origin_signs_in(served: Served) -> None:
    base, http = served.base, served.http
    for path in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/api/mcp",
        "/.well-known/mcp/server-card.json",
        "/api/mcp/server-card",
        "/api/mcp/toolboxes/server-card",
        "/.well-known/ai-catalog.json",
        "/icons/campus.svg",
    ):
        ask = await served.preflight(path, ELSEWHERE)
        assert ask.status_code == 204, (path, ask.status_code, ask.text)
        assert_open(ask)
        assert "GET" in ask.headers["access-control-allow-methods"]
        allowed = ask.headers["access-control-allow-headers"].lower()
        for header in ("authorization", "content-type", "mcp-protocol-version"):
            assert header in allowed, (path, allowed)
        assert int(ask.headers["access-control-max-age"]) > 0
        got = await http.get(base + path, headers={"Origin": ELSEWHERE})
        assert got.status_code == 200, (path, got.text)
        assert_open(got)
    card = await http.get(base + "/.well-known/mcp/server-card.json", headers={"Origin": ELSEWHERE})
    assert "etag" in card.headers["access-control-expose-headers"].lower(), "a page can revalidate the card"

    for path in ("/api/oauth/register", "/api/oauth/token", "/api/oauth/revoke"):
        ask = await served.preflight(path, ELSEWHERE, "POST")
        assert ask.status_code == 204, path
        assert_open(ask)
        assert "POST" in ask.headers["access-control-allow-methods"]

    # The inspector's own calls, each with its Origin: registration, the code exchange, revocation.
    registered = await http.post(
        base + "/api/oauth/register",
        json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Web Inspector"},
        headers={"Origin": ELSEWHERE},
    )
    assert registered.status_code == 201, registered.text
    assert_open(registered)
    client_id = registered.json()["client_id"]
    request = authorization_request(base, client_id, "probe:public probe:read")
    callback = await BrowserStudent("student1", "demo").approve(request.url)
    token_form = {
        "grant_type": "authorization_code",
        "code": callback_params(callback)["code"],
        "redirect_uri": TEST_REDIRECT_URI,
        "client_id": client_id,
        "code_verifier": request.verifier,
        "resource": request.resource,
    }
    tokens = await http.post(base + "/api/oauth/token", data=token_form, headers={"Origin": ELSEWHERE})
    assert tokens.status_code == 200, tokens.text
    assert_open(tokens)
    # (A made-up code, not this one again: a replayed code would revoke the tokens it gave.)
    again = await http.post(
        base + "/api/oauth/token", data={**token_form, "code": "not-a-code"}, headers={"Origin": ELSEWHERE}
    )
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert_open(again)  # the page can read why it was refused

    # /api/mcp answers the inspector's loopback origin, echoed, and never another site.
    token = tokens.json()["access_token"]
    ask = await served.preflight("/api/mcp", INSPECTOR, "POST")
    assert ask.status_code == 204
    assert ask.headers["access-control-allow-origin"] == INSPECTOR
    assert "origin" in ask.headers["vary"].lower()
    assert "access-control-allow-credentials" not in ask.headers
    called = await http.post(
        base + "/api/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {token}", "Origin": INSPECTOR},
    )
    assert called.status_code == 200, called.text
    assert called.headers["access-control-allow-origin"] == INSPECTOR
    unsigned = await http.post(base + "/api/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Origin": INSPECTOR})
    assert unsigned.status_code == 401
    assert "www-authenticate" in unsigned.headers["access-control-expose-headers"].lower()

    assert_closed(await served.preflight("/api/mcp", ELSEWHERE, "POST"))
    rebinding = await http.post(
        base + "/api/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {token}", "Origin": ELSEWHERE},
    )
    assert rebinding.status_code == 403, "the DNS-rebinding guard still refuses another origin"
    assert_closed(rebinding)

    revoked = await http.post(
        base + "/api/oauth/revoke", data={"token": token, "client_id": client_id}, headers={"Origin": ELSEWHERE}
    )
    assert revoked.status_code == 200, revoked.text
    assert_open(revoked)


async def test_pages_with_the_session_cookie_never_answer_another_origin(served: Served) -> None:
    base = served.base
    client_id = await register_app(served.http, base, "Cookie Test App")
    consent_url = authorization_request(base, client_id, "probe:read").url
    async with httpx.AsyncClient(timeout=30, follow_redirects=False) as browser:
        login = await browser.get(base + "/login")
        (form,) = [f for f in parse_forms(login.text) if f.action == "/login"]
        data = {f.name: f.value for f in form.fields if f.kind == "hidden"}
        signed_in = await browser.post(
            urljoin(base, form.action), data={**data, "username": "student1", "password": "demo"}
        )
        assert signed_in.status_code in (302, 303), signed_in.text
        for origin in (ELSEWHERE, INSPECTOR):
            for url in (base + "/dashboard", base + "/login", consent_url, base + "/dashboard/settings"):
                path = url.removeprefix(base)
                ask = await browser.options(
                    url,
                    headers={
                        "Origin": origin,
                        "Access-Control-Request-Method": "POST",
                        "Access-Control-Request-Headers": "content-type",
                    },
                )
                assert_closed(ask)
                page = await browser.get(url, headers={"Origin": origin})
                assert page.status_code == 200, (path, page.status_code)
                assert_closed(page)
            consent = await browser.get(consent_url, headers={"Origin": origin})
            assert "Allow" in consent.text, "the signed-in consent page itself was read"
