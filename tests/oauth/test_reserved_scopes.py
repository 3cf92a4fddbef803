"""Seed 000's reserved friend scopes (issue 37, point 9), on the demo campus with every family served
on loopback: ``friends:requests``, ``friends:meetings`` and ``friends:groups`` exist. Registration
accepts them, the consent page offers them unchecked when an app asks and says they give nothing
yet, a token can hold them; no tool needs them and the 401 challenge does not ask for them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from campus_mcp.testing import CampusHarness, TestDatabases
from campus_mcp.testing.oauth import TEST_REDIRECT_URI, BrowserStudent, authorization_request, exchange_code

from tests.support.endpoints import served_demo_campus

RESERVED = ["friends:requests", "friends:meetings", "friends:groups"]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


async def test_the_reserved_friend_scopes_are_accepted_and_give_no_tool(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    async with httpx.AsyncClient(timeout=30) as http:
        registered = await http.post(
            f"{base}/api/oauth/register",
            json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Friends App", "scope": " ".join(RESERVED)},
        )
        assert registered.status_code == 201, registered.text
        assert registered.json()["scope"].split() == RESERVED
        request = authorization_request(base, registered.json()["client_id"], " ".join(["friends:read", *RESERVED]))
        student = BrowserStudent("student2", "demo", choose={"friends:read", "friends:requests"})
        answered = await exchange_code(http, request, await student.approve(request.url))
        challenge = await http.post(f"{base}/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert student.last_consent is not None
    assert student.last_consent.boxes == {"friends:read": True, **dict.fromkeys(RESERVED, False)}
    assert student.last_consent.html.count("Reserved for tools to come") == 3
    assert answered.status_code == 200, answered.text
    assert {"friends:read", "friends:requests"} <= set(answered.json()["scope"].split())
    assert not [tool for tool in campus.registry.tools.values() if tool.scope in RESERVED]
    asked = re.search(r'scope="([^"]*)"', challenge.headers["www-authenticate"])
    assert asked is not None and not set(asked.group(1).split()) & set(RESERVED)
