"""Token guessing is counted (issue 15 point 1), and every counted answer carries the limit's fields.

A request whose bearer token does not resolve (unknown, expired, revoked, malformed; an OAuth
token on /api/mcp or a personal one on a REST route) counts against its address on a limit of its
own, ``api/bad-token``, before its 401 is answered; past the limit it gets a 429 with the fields.
The counter is separate from ``api/address`` and ``api/user``, so a student with a good token
behind the same NAT address is not locked out by someone else's guesses. Over real HTTP on
loopback; a trusted proxy's X-Forwarded-For gives each part of a test its own address.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.oauth.token_cli import issue
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port, serve_on_loopback

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}})
UNKNOWN_PAT = "cmcp_pat_0123456789ab_" + "A" * 43


def at(address: str, **headers: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, **headers}


async def test_bad_tokens_are_counted_per_address_and_good_tokens_there_still_work(
    campus_factory: CampusFactory,
) -> None:
    port = free_port()
    campus = await campus_factory(
        demo=True,
        rate_limits=True,
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
        trusted_proxies=["127.0.0.1"],
        rate_limit_overrides=["api/bad-token=6"],
    )
    good, _ = await issue(campus.deployment, "student1", ["catalog"], 10)
    expired, _ = await issue(campus.deployment, "student2", ["catalog"], 0)
    revoked, _ = await issue(campus.deployment, "student3", ["catalog"], 10)
    store = OAuthStore(campus.sessions)
    record = await store.find_token(revoked, None)
    assert record is not None
    await store.revoke(record, family=False)
    nat = "198.51.100.20"
    # Six bad bearer checks from one address, of every kind and on every kind of endpoint.
    bad: list[tuple[str, str, dict[str, str]]] = [
        ("POST", "/api/mcp", {"Authorization": "Bearer cmcp_at_guess-number-one"}),
        ("POST", "/api/mcp", {"Authorization": f"Bearer {expired}"}),
        ("POST", "/api/mcp/catalog", {"Authorization": f"Bearer {revoked}"}),
        ("POST", "/api/mcp/toolboxes", {"Authorization": "Basic c3R1ZGVudDE6cGFzc3dvcmQ="}),
        ("POST", "/api/mcp", {"Authorization": "Bearer"}),
        ("GET", "/api/v1/catalog/terms", {"Authorization": f"Bearer {UNKNOWN_PAT}"}),
    ]
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        for method, path, headers in bad:
            answer = await http.request(method, path, content=PING, headers=at(nat, **MCP_HEADERS, **headers))
            assert answer.status_code == 401, (path, answer.text[:300])
            assert 'error="invalid_token"' in answer.headers["www-authenticate"]
            assert answer.json()["error"] == "invalid_token"

        # The seventh: refused before any 401, with the fields and what to do instead of retrying.
        refused = await http.post(
            "/api/mcp", content=PING, headers=at(nat, **MCP_HEADERS, Authorization="Bearer cmcp_at_guess-seven")
        )
        assert refused.status_code == 429, refused.text[:300]
        wait = int(refused.headers["retry-after"])
        assert 1 <= wait <= 60
        assert refused.headers["ratelimit-policy"] == '"api/bad-token";q=6;w=60'
        assert refused.headers["ratelimit"] == f'"api/bad-token";r=0;t={wait}'
        body = refused.json()
        assert body["error"] == "rate_limited"
        description = body["error_description"]
        assert "invalid, expired or revoked token" in description and f"Retry after {wait} seconds" in description
        assert "sign in again" in description
        assert "cmcp_at_guess-seven" not in refused.text
        # A REST route from the same address: the same counter, the REST shape of a refusal.
        rest = await http.get("/api/v1/catalog/terms", headers=at(nat, Authorization=f"Bearer {UNKNOWN_PAT}"))
        assert rest.status_code == 429
        assert rest.json()["error"] == "RateLimited" and "Retry after" in rest.json()["message"]

        # A student with a good token behind the same address is not locked out, on MCP and REST.
        answer = await http.post(
            "/api/mcp", content=PING, headers=at(nat, **MCP_HEADERS, Authorization=f"Bearer {good}")
        )
        assert answer.status_code == 200, answer.text[:300]
        student = await campus.student_principal("student4")
        assert student.user_id is not None
        personal = await PersonalTokens(campus.sessions, campus.settings).create(
            student.user_id, name="grade script", scope="catalog", days=7
        )
        terms = await http.get("/api/v1/catalog/terms", headers=at(nat, Authorization=f"Bearer {personal}"))
        assert terms.status_code == 200, terms.text[:300]
        # Nor is anyone else's address: its bad token still gets the 401 that sends it to sign in.
        elsewhere = await http.post(
            "/api/mcp", content=PING, headers=at("198.51.100.21", **MCP_HEADERS, Authorization="Bearer nope")
        )
        assert elsewhere.status_code == 401


async def test_answers_within_the_limits_carry_the_ratelimit_fields(campus_factory: CampusFactory) -> None:
    port = free_port()
    campus = await campus_factory(
        demo=True, rate_limits=True, anonymous_access=True, public_url=f"http://127.0.0.1:{port}"
    )
    token, _ = await issue(campus.deployment, "student1", ["catalog"], 10)
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        # A student's MCP request: the student's budget, one used.
        signed_in = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        answers: list[httpx.Response] = [await http.post("/api/mcp", content=PING, headers=signed_in) for _ in range(2)]
        assert [a.status_code for a in answers] == [200, 200]
        assert answers[1].headers["ratelimit-policy"] == '"api/user";q=100;w=60'
        assert_state(answers[1], "api/user", remaining=98)
        assert "retry-after" not in answers[1].headers
        # An anonymous REST request and an anonymous MCP request: the address's budget.
        rest = await http.get("/api/v1/catalog/terms")
        assert rest.status_code == 200
        assert rest.headers["ratelimit-policy"] == '"api/address";q=300;w=60'
        assert_state(rest, "api/address", remaining=299)
        anonymous = await http.post("/api/mcp", content=PING, headers=MCP_HEADERS)
        assert anonymous.status_code == 200
        assert_state(anonymous, "api/address", remaining=298)
        # A page that is not a limited resource gets no fields.
        assert "ratelimit" not in (await http.get("/healthz")).headers


def assert_state(answer: httpx.Response, policy: str, *, remaining: int) -> None:
    """The RateLimit field of an answer let through: this many left, the window's seconds to go."""
    fields: dict[str, Any] = dict(part.split("=", 1) for part in answer.headers["ratelimit"].split(";")[1:])
    assert answer.headers["ratelimit"].startswith(f'"{policy}";'), answer.headers["ratelimit"]
    assert int(fields["r"]) == remaining
    assert 1 <= int(fields["t"]) <= 60
