"""IPv6 clients (issue 30, point 5): a campus served on ``::1`` answers a client over ``[::1]``, and
whatever counts addresses counts it by its IPv6 /64 (``limits.policy.address_key``).

Why the /64 and not the single address: one subscriber (a home, a phone, a campus VLAN) holds a
whole /64 and picks a fresh address in it at will (privacy addresses), so a limit keyed by the
single address would count nothing; a /64 is what one IPv4 address is. Both the rate limits and the
sign-in limits use that key, and ``campus-mcp students unlock --address`` takes any address in it.
"""

from __future__ import annotations

import socket

import httpx
import pytest
from campus_mcp.oauth.models import LoginFailure
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port, parse_forms, serve_on_loopback
from sqlalchemy import select

from tests.support.endpoints import MODERN, mcp_client, token_for


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


pytestmark = pytest.mark.skipif(not ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")


async def _sign_in(browser: httpx.AsyncClient, base: str, username: str, password: str) -> httpx.Response:
    page = await browser.get(base + "/login")
    csrf = next(f.value for f in parse_forms(page.text)[0].fields if f.name == "csrf_token")
    return await browser.post(
        base + "/login", data={"csrf_token": csrf, "username": username, "password": password, "next": "/dashboard"}
    )


async def test_a_client_over_ipv6_signs_in_calls_a_tool_and_is_counted_by_its_64(
    campus_factory: CampusFactory,
) -> None:
    port = free_port()
    campus = await campus_factory(
        plugins=["catalog", "schedule"],
        demo=True,
        anonymous_access=False,
        rate_limits=True,
        scheduler=False,
        public_url=f"http://[::1]:{port}",
        login_max_failures=2,
        rate_limit_overrides=["api/address=5"],
    )
    async with serve_on_loopback(campus.app, port, host="::1") as base:
        assert base == f"http://[::1]:{port}"
        async with httpx.AsyncClient(timeout=30) as browser:
            signed_in = await _sign_in(browser, base, "student1", "demo")
            assert signed_in.status_code == 303, signed_in.text
            assert signed_in.headers["location"] == "/dashboard"
            dashboard = await browser.get(base + "/dashboard")
            assert dashboard.status_code == 200 and "Signed in as Demo Student 1" in dashboard.text

        # The SDK client over [::1] with a real token: a tool answers.
        token = await token_for(campus.deployment, ["schedule:read"])
        async with mcp_client(f"{base}/api/mcp", token, MODERN) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "get_course" in names
            answer = await client.call_tool("get_course", {"code": "COMP 1000"})
            assert answer.content

        # Wrong passwords over [::1] are counted against its /64 (the account lock is per username).
        async with httpx.AsyncClient(timeout=30) as guesser:
            for _ in range(3):
                wrong = await _sign_in(guesser, base, "student2", "not-the-password")
            assert wrong.status_code == 429, wrong.text
            assert "Too many failed sign-ins for this account" in wrong.text
        async with campus.deployment.session() as session:
            counted = set((await session.scalars(select(LoginFailure.address))).all())
        assert counted == {"::/64"}

        # Requests without a sign-in are counted per address: over [::1], its /64, five a minute here.
        async with httpx.AsyncClient(timeout=30) as anonymous:
            answers = [await anonymous.get(base + "/.well-known/oauth-protected-resource/api/mcp") for _ in range(6)]
        assert answers[0].status_code == 200, answers[0].text
        refused = answers[-1]
        assert refused.status_code == 429, refused.text
        assert "from your network address" in refused.text and "Traceback" not in refused.text

        # A signed-in student on the same address is counted by account, not by the address.
        async with mcp_client(f"{base}/api/mcp", token, MODERN) as client:
            assert (await client.call_tool("get_course", {"code": "COMP 1000"})).content
