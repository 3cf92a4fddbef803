"""The session middleware on ``/api/mcp`` (issue 16): skipped for a request without the session
cookie, and nothing a client sees changes for it (campus_mcp.oauth.session.browser_session_middleware).

A browser that sends the cookie still gets the session read: its student is whom a request
without a token counts against (``api/user``), and a session that was signed out elsewhere is
cleared on the answer. Without the cookie, the request counts against the address and gets no
cookie; a CORS preflight and a tools/call from an allowed origin are answered as before. Over real
HTTP on loopback, since only such requests are counted.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from campus_mcp.oauth.session import SESSION_COOKIE, sends_session_cookie
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port, parse_forms, serve_on_loopback

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_terms", "arguments": {}}}
).encode()
INSPECTOR = "http://localhost:6274"  # a loopback origin the DNS-rebinding guard trusts


@contextlib.asynccontextmanager
async def served(campus_factory: CampusFactory) -> AsyncIterator[str]:
    port = free_port()
    campus = await campus_factory(
        demo=True,
        rate_limits=True,
        anonymous_access=True,
        public_url=f"http://127.0.0.1:{port}",
        scheduler=False,
        rate_limit_overrides=["api/address=1000", "api/user=1000"],
    )
    async with serve_on_loopback(campus.app, port) as base:
        yield base


async def sign_in(client: httpx.AsyncClient) -> None:
    page = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    signed_in = await client.post("/login", data=data | {"username": "student1", "password": "demo"})
    assert signed_in.status_code == 303, signed_in.text[:300]
    assert any(name.startswith(SESSION_COOKIE) for name in client.cookies)


def policy_of(response: httpx.Response) -> str:
    return response.headers["ratelimit-policy"].split(";")[0]


def assert_answered(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text[:300]
    result: dict[str, Any] = response.json()["result"]
    assert result.get("isError") is not True, result
    return result


async def test_a_signed_in_browser_counts_as_its_student_and_a_cookieless_call_as_its_address(
    campus_factory: CampusFactory,
) -> None:
    async with served(campus_factory) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as browser:
            await sign_in(browser)
            with_cookie = await browser.post("/api/mcp", content=CALL, headers=HEADERS)
            assert_answered(with_cookie)
            assert policy_of(with_cookie) == '"api/user"'
            # The session's cookie comes back renewed, as on every answer to a signed-in browser.
            assert with_cookie.headers["set-cookie"].startswith(SESSION_COOKIE)
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            without = await client.post("/api/mcp", content=CALL, headers=HEADERS)
            assert_answered(without)
            assert policy_of(without) == '"api/address"'
            assert "set-cookie" not in without.headers
            # Another site's cookie is not ours: still the address, still no cookie set.
            other = await client.post("/api/mcp", content=CALL, headers={**HEADERS, "Cookie": "theme=dark"})
            assert_answered(other)
            assert policy_of(other) == '"api/address"' and "set-cookie" not in other.headers
            # The same answer either way: the session changes whom it counts against, not what it says.
            assert with_cookie.json() == without.json()


async def test_a_signed_out_copy_of_the_cookie_is_cleared_on_the_mcp_answer(campus_factory: CampusFactory) -> None:
    async with served(campus_factory) as base, httpx.AsyncClient(base_url=base, timeout=30) as browser:
        await sign_in(browser)
        copy = dict(browser.cookies)
        dashboard = await browser.get("/dashboard")
        (form,) = [f for f in parse_forms(dashboard.text) if f.action == "/logout"]
        data = {f.name: f.value for f in form.fields if f.kind == "hidden"}
        assert (await browser.post("/logout", data=data)).status_code == 303
        async with httpx.AsyncClient(base_url=base, timeout=30, cookies=copy) as stale:
            answer = await stale.post("/api/mcp", content=CALL, headers=HEADERS)
            assert_answered(answer)
            # The session of an older generation signs nobody in, and its cookie is cleared.
            assert policy_of(answer) == '"api/address"'
            cleared = answer.headers.get_list("set-cookie")
            assert cleared and all(c.startswith(SESSION_COOKIE) and "null" in c for c in cleared), cleared


async def test_cors_on_the_mcp_endpoint_without_a_cookie(campus_factory: CampusFactory) -> None:
    async with served(campus_factory) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        ask = await client.options(
            "/api/mcp",
            headers={
                "Origin": INSPECTOR,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
            },
        )
        assert ask.status_code == 204
        assert ask.headers["access-control-allow-origin"] == INSPECTOR
        assert "POST" in ask.headers["access-control-allow-methods"]
        assert "set-cookie" not in ask.headers
        call = await client.post("/api/mcp", content=CALL, headers={**HEADERS, "Origin": INSPECTOR})
        assert_answered(call)
        assert call.headers["access-control-allow-origin"] == INSPECTOR
        assert call.headers["vary"] == "Origin"
        assert "set-cookie" not in call.headers


def test_which_requests_may_carry_the_session_cookie() -> None:
    def scope(*headers: tuple[bytes, bytes]) -> Any:
        return {"type": "http", "headers": list(headers)}

    assert not sends_session_cookie(scope())
    assert not sends_session_cookie(scope((b"cookie", b"theme=dark")))
    assert sends_session_cookie(scope((b"cookie", SESSION_COOKIE.encode() + b"=abc")))
    # A session too large for one cookie is split over campus_session-0, -1, ...
    assert sends_session_cookie(scope((b"cookie", b"theme=dark; " + SESSION_COOKIE.encode() + b"-0=abc")))
    assert sends_session_cookie(scope((b"Cookie", SESSION_COOKIE.encode() + b"=abc")))
