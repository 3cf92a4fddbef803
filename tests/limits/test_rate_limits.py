"""Rate limits in one process (issue 15 point 1, seed 000 "Rate limits"), over real HTTP on loopback.

A student's token counts against the student (100 a minute, the real default in the first test),
a request without a token against its address, an address of a platform range against the
range's backstop, and a search by meaning against ``catalog/semantic``. A refused HTTP request is
a 429 with ``Retry-After`` and the ``RateLimit-Policy``/``RateLimit`` fields; a refused tool call
is a tool error that says when to retry, counted as ``rate_limited``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from campus_mcp.base import metrics
from campus_mcp.base.addresses import client_host, networks
from campus_mcp.limits.platforms import read_ranges
from campus_mcp.limits.policy import parse_overrides
from campus_mcp.oauth.token_cli import issue
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import free_port, serve_on_loopback

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def rpc(method: str, params: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}).encode()


def tool_call(name: str, arguments: dict[str, Any] | None = None) -> bytes:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}})


def assert_refused_with_fields(response: httpx.Response, policy: str, quota: int) -> int:
    """A 429 with a sane Retry-After and the draft's fields for ``policy``; the seconds to wait."""
    assert response.status_code == 429, response.text[:300]
    wait = int(response.headers["retry-after"])
    assert 1 <= wait <= 60
    assert response.headers["ratelimit-policy"] == f'"{policy}";q={quota};w=60'
    assert response.headers["ratelimit"] == f'"{policy}";r=0;t={wait}'
    assert "Traceback" not in response.text
    return wait


@contextlib.asynccontextmanager
async def served(campus_factory: CampusFactory, **settings: Any) -> AsyncIterator[tuple[CampusHarness, str]]:
    port = free_port()
    campus = await campus_factory(
        demo=True, rate_limits=True, public_url=f"http://127.0.0.1:{port}", scheduler=False, **settings
    )
    async with serve_on_loopback(campus.app, port) as base:
        yield campus, base


async def test_the_101st_request_of_a_student_in_a_minute_is_refused(campus_factory: CampusFactory) -> None:
    # The real defaults: 100 a minute per student.
    async with served(campus_factory, anonymous_access=False) as (campus, base):
        token, _ = await issue(campus.deployment, "student1", ["catalog"], 10)
        headers = {**HEADERS, "Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
            for _ in range(100):
                answer = await http.post("/api/mcp", content=rpc("ping"))
                assert answer.status_code == 200, answer.text[:300]
            before = metrics.value("tool_calls_total", tool="list_terms", outcome="rate_limited")
            # The 101st, a tool call: a tool error the model can act on, not an HTTP failure.
            refused = await http.post("/api/mcp", content=tool_call("list_terms"))
            assert refused.status_code == 200, refused.text[:300]
            result = refused.json()["result"]
            assert result["isError"] is True
            text = result["content"][0]["text"]
            assert re.search(r"Retry after \d+ seconds", text), text
            assert "at most 100 a minute" in text
            assert metrics.value("tool_calls_total", tool="list_terms", outcome="rate_limited") == before + 1
            # Anything else of the same student: a 429 with the fields.
            ping = await http.post("/api/mcp", content=rpc("ping"))
            assert_refused_with_fields(ping, "api/user", 100)
            assert ping.json()["error"] == "rate_limited"
        # Another student's budget is untouched.
        other, _ = await issue(campus.deployment, "student2", ["catalog"], 10)
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            answer = await http.post(
                "/api/mcp", content=rpc("ping"), headers={**HEADERS, "Authorization": f"Bearer {other}"}
            )
            assert answer.status_code == 200


async def test_without_a_token_the_address_counts_and_a_platform_range_gets_the_backstop(
    campus_factory: CampusFactory,
) -> None:
    async with (
        served(
            campus_factory,
            anonymous_access=True,
            rate_limit_overrides=["api/address=3", "mcp/platform=6"],
            platform_ranges=["10.99.0.0/16"],
            trusted_proxies=["127.0.0.1"],
        ) as (_campus, base),
        httpx.AsyncClient(base_url=base, timeout=30) as http,
    ):
        for _ in range(3):
            assert (await http.get("/api/v1/catalog/terms")).status_code == 200
        refused = await http.get("/api/v1/catalog/terms")
        assert_refused_with_fields(refused, "api/address", 3)
        body = refused.json()
        assert body["error"] == "RateLimited" and "Retry after" in body["message"]
        # Behind the trusted proxy, a platform address: past the address limit, up to the backstop.
        platform = {"X-Forwarded-For": "203.0.113.9, 10.99.3.4"}
        for _ in range(6):
            assert (await http.get("/api/v1/catalog/terms", headers=platform)).status_code == 200
        assert_refused_with_fields(await http.get("/api/v1/catalog/terms", headers=platform), "mcp/platform", 6)
        # The backstop is per range: a neighbour in the same range shares it.
        neighbour = await http.get("/api/v1/catalog/terms", headers={"X-Forwarded-For": "10.99.200.1"})
        assert neighbour.status_code == 429


async def test_one_question_asked_again_counts_every_time_against_the_meaning_limit(
    campus_factory: CampusFactory,
) -> None:
    # Before: only the first answer was counted; the answer cache handed out the rest uncounted,
    # so one question repeated went past the limit (issue 30: 60 answers in 15 s against 30 a minute).
    async with served(campus_factory, anonymous_access=True, rate_limit_overrides=["catalog/semantic=3"]) as (
        _campus,
        base,
    ):
        params = {"q": "a class about the stock market", "semantic": "true"}
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for _ in range(3):
                answer = await http.get("/api/v1/catalog/courses", params=params)
                assert answer.status_code == 200, answer.text[:300]
            refused = await http.get("/api/v1/catalog/courses", params=params)
            assert refused.status_code == 429, refused.text[:300]
            assert "searches by meaning" in refused.json()["message"]
            # A search by words alone, cached or not, is not one.
            for _ in range(2):
                assert (await http.get("/api/v1/catalog/courses", params={"q": "finance"})).status_code == 200


async def test_searches_by_meaning_have_their_own_limit(campus_factory: CampusFactory) -> None:
    async with served(campus_factory, anonymous_access=True, rate_limit_overrides=["catalog/semantic=2"]) as (
        _campus,
        base,
    ):
        # Other words each time: an answer cache must not hide a search.
        topics = ["the stock market", "robots", "bridges", "drawing"]
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for topic in topics[:2]:
                answer = await http.get(
                    "/api/v1/catalog/courses", params={"q": f"a class about {topic}", "semantic": "true"}
                )
                assert answer.status_code == 200, answer.text[:300]
            # Searches by words alone do not count against it.
            assert (await http.get("/api/v1/catalog/courses", params={"q": "finance"})).status_code == 200
            refused = await http.get("/api/v1/catalog/courses", params={"q": topics[2], "semantic": "true"})
            assert refused.status_code == 429, refused.text[:300]
            assert refused.headers["ratelimit-policy"] == '"catalog/semantic";q=2;w=60'
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert "searches by meaning" in refused.json()["message"]
            # The same address over MCP: the tool error says when to retry.
            call = tool_call("search_courses", {"q": topics[3], "semantic": True})
            result = (await http.post("/api/mcp", content=call, headers=HEADERS)).json()["result"]
            assert result["isError"] is True
            assert re.search(r"searches by meaning .*Retry after \d+ seconds", result["content"][0]["text"])


def test_the_settings_and_lists_the_limits_read() -> None:
    assert parse_overrides(["api/user=200", "oauth/register=20/600"]) == {
        "api/user": (200, None),
        "oauth/register": (20, 600.0),
    }
    with pytest.raises(ValueError, match="NAME=COUNT"):
        parse_overrides(["api/user"])
    # OpenAI's published shape, a JSON list, and plain text.
    openai = json.dumps({"creationTime": "x", "prefixes": [{"ipv4Prefix": "23.102.140.112/28"}]}).encode()
    assert read_ranges(openai)[0] == ["23.102.140.112/28"]
    assert read_ranges(b'["2001:db8::/32"]')[0] == ["2001:db8::/32"]
    assert read_ranges(b"# ranges\n192.0.2.0/24\n\n")[0] == ["192.0.2.0/24"]
    with pytest.raises(ValueError, match="not a network"):
        read_ranges(b"not-a-network\n")
    # X-Forwarded-For counts only from a trusted proxy, and only its nearest untrusted hop.
    trusted = networks(["127.0.0.1"], "test")
    assert client_host("198.51.100.1", ["10.0.0.1"], trusted) == "198.51.100.1"
    assert client_host("127.0.0.1", ["6.6.6.6, 198.51.100.7"], trusted) == "198.51.100.7"
