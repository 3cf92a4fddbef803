"""Refresh rotation under attack and under races, over real HTTP on loopback (issue 9, point 8).

The invariants (RFC 9700 4.14.2, refresh token rotation with reuse detection):

- of many refreshes racing with one refresh token, never more than one wins;
- a refresh token presented after it was used is reuse: afterwards no token of its family works,
  the winner's freshly issued pair included;
- a refresh the server refuses for what it asks (a wider scope, another client) does not use up
  the token: the rightful client's next refresh still works.

Run them on PostgreSQL too (``CAMPUS_MCP_TEST_DATABASE_URL``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from campus_mcp.oauth.models import OAuthToken, credential_hash
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import (
    BrowserStudent,
    authorization_request,
    exchange_code,
    probe_campus_on_loopback,
    register_app,
)
from sqlalchemy import func, select

RACERS = 10
ROUNDS = 20
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "refresh-test", "version": "1"},
    },
}


@dataclass
class Server:
    base: str
    campus: CampusHarness
    http: httpx.AsyncClient
    student: BrowserStudent

    @property
    def mcp_url(self) -> str:
        return self.base + "/api/mcp"

    async def client_id(self) -> str:
        return await register_app(self.http, self.base, "Refresh App")

    async def tokens(self, client_id: str, scope: str = "probe:public probe:read") -> dict[str, Any]:
        """A student signs in for ``client_id`` and the app exchanges its code: a new family."""
        request = authorization_request(self.base, client_id, scope)
        response = await exchange_code(self.http, request, await self.student.approve(request.url))
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def refresh(self, client_id: str, refresh_token: str, **extra: str) -> httpx.Response:
        data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id, **extra}
        return await self.http.post(self.base + "/api/oauth/token", data=data)

    async def works(self, access_token: str) -> bool:
        response = await self.http.post(
            self.mcp_url,
            json=INITIALIZE,
            headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"},
        )
        assert response.status_code in (200, 401), response.text
        return response.status_code == 200

    async def family_size(self, refresh_token: str) -> int:
        """How many issuances the family of ``refresh_token`` holds (the database's view)."""
        async with self.campus.sessions() as session:
            family = select(OAuthToken.family_id).where(OAuthToken.refresh_token_hash == credential_hash(refresh_token))
            count = await session.execute(select(func.count(OAuthToken.id)).where(OAuthToken.family_id.in_(family)))
            return int(count.scalar_one())


@pytest.fixture
async def server(campus_factory: CampusFactory) -> AsyncIterator[Server]:
    async with probe_campus_on_loopback(campus_factory) as (base, campus), httpx.AsyncClient(timeout=60) as http:
        yield Server(base=base, campus=campus, http=http, student=BrowserStudent("student1", "demo"))


async def test_racing_refreshes_have_one_winner_and_reuse_leaves_no_token_alive(server: Server) -> None:
    client_id = await server.client_id()
    for round_ in range(ROUNDS):
        first = await server.tokens(client_id)
        replies = await asyncio.gather(*(server.refresh(client_id, first["refresh_token"]) for _ in range(RACERS)))
        won = [r.json() for r in replies if r.status_code == 200]
        refused = [r.json() for r in replies if r.status_code != 200]
        assert len(won) <= 1, f"round {round_}: {len(won)} refreshes with one token won"
        assert all(r.get("error") == "invalid_grant" for r in refused), refused
        # Every loser presented a token that had been used: reuse. Nothing of the family may live on.
        assert len(won) + len(refused) == RACERS and refused
        assert not await server.works(first["access_token"]), f"round {round_}: the first access token survived"
        for pair in won:
            assert not await server.works(pair["access_token"]), f"round {round_}: the winner's access token survived"
            again = await server.refresh(client_id, pair["refresh_token"])
            assert again.status_code == 400, f"round {round_}: the winner's refresh token survived: {again.text}"
        # One claim, at most one issuance: the family is the first pair plus the winner's.
        assert await server.family_size(first["refresh_token"]) == 1 + len(won)


async def test_a_wider_scope_is_refused_without_using_up_the_token(server: Server) -> None:
    client_id = await server.client_id()
    first = await server.tokens(client_id, scope="probe:public probe:read")
    wider = await server.refresh(client_id, first["refresh_token"], scope="probe:public probe:read probe:write")
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope", wider.text
    assert "probe:write" in wider.json()["error_description"]

    # The rightful retry is a normal refresh, not reuse: it works and the family lives.
    retry = await server.refresh(client_id, first["refresh_token"])
    assert retry.status_code == 200, retry.text
    assert await server.works(retry.json()["access_token"])


async def test_a_refresh_may_narrow_the_scope(server: Server) -> None:
    client_id = await server.client_id()
    first = await server.tokens(client_id, scope="probe:public probe:read")
    narrower = await server.refresh(client_id, first["refresh_token"], scope="probe:public")
    assert narrower.status_code == 200, narrower.text
    assert narrower.json()["scope"] == "probe:public"


async def test_another_clients_refresh_is_refused_without_using_up_the_token(server: Server) -> None:
    client_id, stranger = await server.client_id(), await server.client_id()
    first = await server.tokens(client_id)
    stolen = await server.refresh(stranger, first["refresh_token"])
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant", stolen.text
    assert "another app" in stolen.json()["error_description"]

    retry = await server.refresh(client_id, first["refresh_token"])
    assert retry.status_code == 200, retry.text
    assert await server.works(retry.json()["access_token"])


async def test_a_used_refresh_token_presented_again_ends_the_family(server: Server) -> None:
    client_id = await server.client_id()
    first = await server.tokens(client_id)
    second = (await server.refresh(client_id, first["refresh_token"])).json()
    reused = await server.refresh(client_id, first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert "Sign in again" in reused.json()["error_description"]
    assert not await server.works(second["access_token"])
    assert (await server.refresh(client_id, second["refresh_token"])).status_code == 400
