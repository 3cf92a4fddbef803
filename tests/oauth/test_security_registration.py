"""Dynamic client registration is bounded, over real HTTP on loopback (issue 9, points 5 and 7).

Open registration (RFC 7591) is what MCP clients expect, so anybody may register; what they
may register is capped: the body, the number and length of redirect URIs, every string, the
registrations per address, and the characters of a redirect URI (it ends up in the consent
page's Content-Security-Policy header). Each refusal is the RFC 7591 error with a description
that says the limit.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from campus_mcp.limits.policy import REGISTRATIONS_PER_ADDRESS
from campus_mcp.oauth.limits import SlidingWindowLimiter
from campus_mcp.oauth.models import OAuthClient
from campus_mcp.oauth.registration import MAX_BODY_BYTES, MAX_NAME_CHARS, MAX_REDIRECT_URIS, MAX_URI_CHARS
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import TEST_REDIRECT_URI, ScopeProbe, free_port, serve_on_loopback
from sqlalchemy import func, select


@dataclass
class Registrar:
    url: str
    campus: CampusHarness
    http: httpx.AsyncClient

    async def register(self, **metadata: Any) -> httpx.Response:
        body = {"redirect_uris": [TEST_REDIRECT_URI], "client_name": "Bounded App", **metadata}
        return await self.http.post(self.url, json=body)

    async def clients(self) -> int:
        async with self.campus.sessions() as session:
            return int((await session.execute(select(func.count()).select_from(OAuthClient))).scalar_one())


@pytest.fixture
async def registrar(campus_factory: CampusFactory) -> AsyncIterator[Registrar]:
    port = free_port()
    campus = await campus_factory(
        plugins=[],
        extra_plugins=[("probe", ScopeProbe())],
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
        rate_limits=True,  # registrations per address are one of the limits
    )
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(timeout=30) as http:
        yield Registrar(url=base + "/api/oauth/register", campus=campus, http=http)


def refusal(response: httpx.Response, status: int = 400) -> dict[str, str]:
    assert response.status_code == status, response.text[:500]
    body: dict[str, str] = response.json()
    assert set(body) == {"error", "error_description"}, body
    assert "Traceback" not in response.text
    return body


async def test_a_good_registration_still_works(registrar: Registrar) -> None:
    response = await registrar.register(scope="probe:read", client_uri="https://app.example/")
    assert response.status_code == 201, response.text
    assert response.json()["client_name"] == "Bounded App"


async def test_a_large_body_is_refused_while_it_is_read(registrar: Registrar) -> None:
    many = [f"https://app.example/cb/{i}" for i in range(200_000)]
    response = await registrar.http.post(registrar.url, json={"redirect_uris": many, "client_name": "Big"})
    body = refusal(response, 413)
    assert body["error"] == "invalid_client_metadata"
    assert f"{MAX_BODY_BYTES // 1024} KB" in body["error_description"]

    # Without a Content-Length (chunked), the cap holds as the bytes arrive.
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"redirect_uris": ["https://app.example/cb"], "client_name": "'
        for _ in range(1000):
            yield b"x" * 1024
        yield b'"}'

    chunked = await registrar.http.post(registrar.url, content=chunks(), headers={"Content-Type": "application/json"})
    assert refusal(chunked, 413)["error"] == "invalid_client_metadata"
    assert await registrar.clients() == 0


async def test_too_many_redirect_uris_are_refused(registrar: Registrar) -> None:
    uris = [f"https://app.example/cb/{i}" for i in range(MAX_REDIRECT_URIS + 1)]
    body = refusal(await registrar.register(redirect_uris=uris))
    assert body["error"] == "invalid_redirect_uri"
    assert f"at most {MAX_REDIRECT_URIS}" in body["error_description"]
    ok = await registrar.register(redirect_uris=uris[:MAX_REDIRECT_URIS])
    assert ok.status_code == 201, ok.text


async def test_a_long_redirect_uri_is_refused(registrar: Registrar) -> None:
    long_uri = "https://app.example/" + "a" * MAX_URI_CHARS
    body = refusal(await registrar.register(redirect_uris=[long_uri]))
    assert body["error"] == "invalid_redirect_uri"
    assert f"{MAX_URI_CHARS:,} characters" in body["error_description"]
    assert long_uri not in body["error_description"]


async def test_every_string_is_capped(registrar: Registrar) -> None:
    name = refusal(await registrar.register(client_name="n" * (MAX_NAME_CHARS + 1)))
    assert name["error"] == "invalid_client_metadata"
    assert "client_name" in name["error_description"] and f"{MAX_NAME_CHARS}" in name["error_description"]
    assert (await registrar.register(client_name="n" * MAX_NAME_CHARS)).status_code == 201

    for field in ("client_uri", "logo_uri", "tos_uri", "policy_uri", "software_id", "software_version", "scope"):
        value = "https://app.example/" + "p" * MAX_URI_CHARS
        body = refusal(await registrar.register(**{field: value}))
        assert body["error"] == "invalid_client_metadata", field
        assert field in body["error_description"], body

    contacts = refusal(await registrar.register(contacts=["c" * (MAX_URI_CHARS + 1) + "@app.example"]))
    assert "contacts" in contacts["error_description"]
    assert await registrar.clients() == 1  # the name of exactly the longest length only


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"scope": 12345}, "scope"),
        ({"scope": ["probe:read"]}, "scope"),
        ({"client_name": {"en": "App"}}, "client_name"),
        ({"client_uri": 7}, "client_uri"),
        ({"redirect_uris": "https://app.example/cb"}, "redirect_uris"),
        ({"redirect_uris": [7]}, "redirect_uris"),
        ({"redirect_uris": []}, "redirect_uris"),
        ({"grant_types": 5}, "grant_types"),
        ({"grant_types": [["authorization_code"]]}, "grant_types"),
        ({"response_types": "code"}, "response_types"),
        ({"contacts": "me@app.example"}, "contacts"),
        ({"jwks": "keys"}, "jwks"),
    ],
)
async def test_a_wrong_type_is_a_400_that_names_the_field(
    registrar: Registrar, metadata: dict[str, Any], field: str
) -> None:
    body = refusal(await registrar.register(**metadata))
    assert body["error"] in ("invalid_client_metadata", "invalid_redirect_uri")
    assert field in body["error_description"], body


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/cb;script-src *",
        "https://app.example;/cb",
        "https://app.example/c b",
        'https://app.example/"cb"',
        "https://app.example/'cb'",
        "https://app.example/cb\r\nSet-Cookie: x=1",
        "https://app.example/cb\x00",
        "https://app.example/cb\t",
        "https://app.example/<cb>",
        "https://app.ex\u00e4mple/cb",
        "https://user;x@app.example/cb",
        "https://a,b.example/cb",
    ],
)
async def test_a_redirect_uri_with_unsafe_characters_is_refused(registrar: Registrar, uri: str) -> None:
    body = refusal(await registrar.register(redirect_uris=[uri]))
    assert body["error"] == "invalid_redirect_uri"
    assert "character" in body["error_description"] or "host" in body["error_description"], body
    assert await registrar.clients() == 0


async def test_registrations_per_address_are_limited(registrar: Registrar) -> None:
    replies = await asyncio.gather(*(registrar.register() for _ in range(REGISTRATIONS_PER_ADDRESS)))
    assert [r.status_code for r in replies] == [201] * REGISTRATIONS_PER_ADDRESS
    over = await registrar.register()
    body = refusal(over, 429)
    assert body["error"] == "temporarily_unavailable"
    assert int(over.headers["retry-after"]) > 0
    assert "minutes" in body["error_description"] or "seconds" in body["error_description"]
    assert await registrar.clients() == REGISTRATIONS_PER_ADDRESS


async def test_the_limiter_forgets_after_its_window() -> None:
    now = [1000.0]
    limiter = SlidingWindowLimiter(limit=2, window_seconds=60, clock=lambda: now[0])
    assert await limiter.hit("a") is None and await limiter.hit("a") is None
    wait = await limiter.hit("a")
    assert wait == pytest.approx(60)
    assert await limiter.hit("b") is None  # one address does not use up another's
    now[0] += 30
    assert await limiter.hit("a") == pytest.approx(30)
    now[0] += 30.5
    assert await limiter.hit("a") is None


async def test_a_body_that_is_not_a_json_object_is_explained(registrar: Registrar) -> None:
    for content in (b"not json", b"[1, 2]", json.dumps("text").encode(), b"[" * 20000):
        response = await registrar.http.post(
            registrar.url, content=content, headers={"Content-Type": "application/json"}
        )
        assert refusal(response)["error"] == "invalid_client_metadata"
