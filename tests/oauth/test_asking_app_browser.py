"""The login and consent pages say which app asks, and what is known of its name (issue 24, point 10).

In headless Chromium: an app that registered itself (RFC 7591) sends student1 to the authorization
URL; the login page's heading names the campus and the app, and the consent page marks the name as
unverified. An app whose client ID is a metadata document's URL is named with that document's
domain, the one thing the server verified (it fetched the document from there over HTTPS). A login
that no app asked for names only the campus.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    authorization_request,
    free_port,
    probe_campus_on_loopback,
    register_app,
    self_signed_certificate,
    serve_on_loopback,
)
from litestar import Litestar, Response, get

from tests.support.chromium import chromium, require_chromium

require_chromium("the login and consent pages")


@pytest.fixture
async def metadata_document(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    """A client ID metadata document served over HTTPS on loopback: its URL and the CA file."""
    cert, key = self_signed_certificate(tmp_path)
    port = free_port()
    url = f"https://localhost:{port}/client.json"

    @get("/client.json", media_type="application/json")
    async def document() -> Response[bytes]:
        body = {
            "client_id": url,
            "client_name": "Doc App",
            "redirect_uris": [TEST_REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        }
        return Response(json.dumps(body).encode())

    async with serve_on_loopback(Litestar([document]), port, ssl_certfile=str(cert), ssl_keyfile=str(key)):
        yield url, cert


async def sign_in_from(page: Any, url: str) -> tuple[str, str]:
    """Open the app's authorization URL, sign in; the login and consent pages' main text."""
    await page.goto(url)
    login = await page.inner_text("main")
    await page.get_by_label("Username").fill("student1")
    await page.get_by_label("Password").fill("demo")
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("button", name="Allow").wait_for()
    return login, await page.inner_text("main")


async def test_a_registered_apps_name_is_named_and_marked_unverified(campus_factory: CampusFactory) -> None:
    async with probe_campus_on_loopback(campus_factory) as (base, campus), httpx.AsyncClient(timeout=30) as http:
        client_id = await register_app(http, base, "Totally Official Campus App")
        url = authorization_request(base, client_id, "probe:public probe:read").url
        async with chromium() as browser:
            page = await browser.new_page()
            await page.goto(f"{base}/login")
            assert (
                await page.get_by_role("heading", level=1).inner_text() == f"Sign in to {campus.settings.campus_name}"
            )
            login, consent = await sign_in_from(page, url)
    assert login.startswith(f"Sign in to {campus.settings.campus_name} to connect Totally Official Campus App\n")
    assert "unverified name" in consent
    assert "The app gave itself the name Totally Official Campus App when it registered" in consent
    assert "has not checked it" in consent


async def test_a_metadata_document_apps_domain_is_named(
    campus_factory: CampusFactory, metadata_document: tuple[str, Path]
) -> None:
    document_url, ca_file = metadata_document
    async with (
        probe_campus_on_loopback(
            campus_factory, oauth_metadata_loopback_for_tests=True, oauth_metadata_ca_file=str(ca_file)
        ) as (base, campus),
        chromium() as browser,
    ):
        page = await browser.new_page()
        login, consent = await sign_in_from(page, authorization_request(base, document_url, "probe:read").url)
        heading = await page.get_by_role("heading", level=1).inner_text()
    assert login.startswith(f"Sign in to {campus.settings.campus_name} to connect Doc App (localhost)\n")
    assert heading == f"Allow Doc App (localhost) to use {campus.settings.product_name}?"
    assert "fetched this app's description from localhost" in consent
    assert "unverified name" not in consent
