"""The MCP endpoints' tests (toolboxes, families): one demo campus with every family, served on
loopback with sign-in required, real access tokens for it, and the SDK client over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import httpx
import httpx2
from campus_mcp.assembly.access import granted_scope
from campus_mcp.assembly.deployment import Deployment
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.oauth.store import ClientRecord, OAuthStore
from campus_mcp.oauth.token_cli import issue
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app, test_settings
from campus_mcp.testing.oauth import TEST_REDIRECT_URI, MemoryStorage, free_port, parse_forms, serve_on_loopback
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

MODERN = "2026-07-28"
# The code a write tool answers a client that cannot be asked (campus_mcp.mcp.confirmation_code).
CONFIRMATION_CODE = re.compile(r'"confirmation": "(v1\.[A-Za-z0-9_-]+)"')
# "auto" probes server/discover and settles on 2026-07-28 (mode=MODERN alone skips the discover,
# so the client would never read the endpoint's instructions or serverInfo).
ERAS = ("legacy", "auto")


@contextlib.asynccontextmanager
async def served_demo_campus(databases: TestDatabases, **settings: Any) -> AsyncIterator[tuple[str, CampusHarness]]:
    """A copy of the demo campus (every installed family), sign-in required, on a loopback port."""
    port = free_port()
    url = await databases.demo_copy()
    registry = load_registry(
        test_settings(url, anonymous_access=False, public_url=f"http://127.0.0.1:{port}", **settings)
    )
    await asyncio.to_thread(upgrade, registry)
    campus = CampusHarness(app=harness_app(registry), registry=registry)
    try:
        async with serve_on_loopback(campus.app, port) as base:
            yield base, campus
    finally:
        await campus.close()
        await databases.drop(url)


async def token_for(deployment: Deployment, scopes: Iterable[str], *, username: str = "student1") -> str:
    """A real access token for ``/api/mcp`` (``campus-mcp token``'s issuance)."""
    token, _ = await issue(deployment, username, list(scopes), 30)
    return token


async def token_of_app(
    deployment: Deployment, client_id: str, scopes: Iterable[str], *, username: str = "student1"
) -> str:
    """A real access token for ``/api/mcp`` held by the app ``client_id`` (saved as the sign-in saves one)."""
    names = list(scopes)
    async with deployment.session() as session:
        student = await student_by_username(session, username)
    assert student is not None
    _, scope = granted_scope(deployment.registry, names, names)
    store = OAuthStore(deployment.sessions)
    await store.save_client(ClientRecord(client_id=client_id, kind="cli", client_name=client_id, redirect_uris=()))
    token = f"cmcp_at_{secrets.token_urlsafe(32)}"
    await store.save_tokens(
        access_token=token,
        refresh_token=None,
        client_id=client_id,
        user_id=student.id,
        scope=scope,
        resource=deployment.settings.mcp_url,
        family_id=uuid.uuid4().hex,
        access_seconds=30 * 60,
    )
    return token


@contextlib.asynccontextmanager
async def mcp_client(url: str, token: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    """The SDK client on ``url`` over HTTP with ``token`` as its bearer token."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client,  # type: ignore[arg-type]
    ):
        yield client


def page_link_in(base: str, text: str) -> str:
    """The confirmation page's link (on ``base``, the campus's origin) in a write tool's first answer."""
    found = re.search(rf"{re.escape(base)}/confirm/[A-Za-z0-9_-]+", text)
    assert found is not None, f"no confirmation page link on {base} in: {text}"
    return found.group(0)


async def confirm_in_the_students_browser(base: str, link: str, username: str) -> str:
    """The student's own browser (a cookie jar of its own): signs in, which comes back to the link,
    presses Confirm there; the words of the page it ends on."""
    async with httpx.AsyncClient(base_url=base, timeout=30, follow_redirects=True) as browser:
        login = await browser.get(link)
        data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
        page = await browser.post("/login", data=data | {"username": username, "password": "demo"})
        assert str(page.url) == link and "Confirm</button>" in page.text, page.text
        (confirm,) = [f for f in parse_forms(page.text) if any(x.value == "confirm" for x in f.fields)]
        done = await browser.post(link, data={f.name: f.value for f in confirm.fields if f.kind == "hidden"})
        return done.text


def confirmation_code_in(text: str) -> str:
    """The confirmation code in a write tool's first answer to a client that cannot be asked."""
    found = CONFIRMATION_CODE.search(text)
    assert found is not None, f"no confirmation code in: {text}"
    return found.group(1)


@contextlib.asynccontextmanager
async def campus_assistant(
    base: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
) -> AsyncIterator[Client]:
    """The MCP SDK's own client as the app "Campus Assistant" on ``base``'s /api/mcp, registering
    itself and signing in with the SDK's OAuth flow; the two handlers are the student's side of that
    flow (a browser through the campus sign-in in the sign-in tests)."""
    provider = OAuthClientProvider(
        server_url=f"{base}/api/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Campus Assistant",
            redirect_uris=[TEST_REDIRECT_URI],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=60) as http,
        Client(streamable_http_client(f"{base}/api/mcp", http_client=http)) as client,  # type: ignore[arg-type]
    ):
        yield client
