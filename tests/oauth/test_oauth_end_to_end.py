"""The real server on loopback, signed in to by the MCP SDK's OAuthClientProvider.

Discovery from the 401, registration (RFC 7591) or a client ID metadata document served by the
test over TLS on loopback, PKCE, the real login and consent forms submitted over HTTP by a
browser stand-in, the code exchange, then tool calls with the token.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    BrowserStudent,
    MemoryStorage,
    free_port,
    probe_campus_on_loopback,
    provider_for,
    self_signed_certificate,
    serve_on_loopback,
)
from litestar import Litestar, get
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client


async def _call_all(mcp_url: str, provider: OAuthClientProvider, mode: str = "auto") -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        tools = await client.list_tools()
        results["tools"] = sorted(t.name for t in tools.tools)
        for name in ("public_probe", "read_probe", "write_probe"):
            results[name] = await client.call_tool(name, {})
    return results


@pytest.fixture
async def live_campus(campus_factory: CampusFactory) -> AsyncIterator[str]:
    async with probe_campus_on_loopback(campus_factory) as (base, _campus):
        yield base


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_sign_in_with_registration_then_call_tools(live_campus: str, mode: str) -> None:
    mcp_url = f"{live_campus}/api/mcp"
    student = BrowserStudent("student1", "demo")  # keeps the page's boxes: reads checked, writes not
    storage = MemoryStorage()
    results = await _call_all(mcp_url, provider_for(mcp_url, student, storage), mode)

    assert student.last_consent is not None
    assert student.last_consent.boxes == {"probe:read": True, "probe:write": False}
    assert results["tools"] == ["public_probe", "read_probe", "write_probe"]
    assert results["public_probe"].structured_content["username"] == "student1"
    # The SDK's get_access_token() sees the same student inside the tool.
    assert results["public_probe"].structured_content["sdk_subject"] == "1"
    granted = results["read_probe"].structured_content["scopes"]
    assert granted == ["probe:public", "probe:read"]  # exactly what was checked, plus the always-on scope
    denied = results["write_probe"]
    assert denied.is_error
    assert "probe:write" in denied.content[0].text and "disconnect" in denied.content[0].text.lower()
    links = [str(item.uri) for item in denied.content if item.type == "resource_link"]
    assert links == [f"{live_campus}/dashboard/settings#connected-apps"]
    assert storage.client is not None and storage.client.client_id.startswith("cmcp_")
    assert storage.tokens is not None and storage.tokens.refresh_token and storage.tokens.expires_in == 3600


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path)


def metadata_document_app(document: dict[str, Any]) -> Litestar:
    @get("/oauth/client.json", media_type="application/json")
    async def client_json() -> bytes:
        return json.dumps(document).encode()

    return Litestar([client_json])


async def test_sign_in_with_a_client_id_metadata_document(
    campus_factory: CampusFactory, tls_files: tuple[Path, Path]
) -> None:
    cert, key = tls_files
    doc_port = free_port()
    metadata_url = f"https://localhost:{doc_port}/oauth/client.json"
    document = {
        "client_id": metadata_url,
        "client_name": "Metadata Assistant",
        "redirect_uris": [TEST_REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    async with (
        serve_on_loopback(metadata_document_app(document), doc_port, ssl_certfile=str(cert), ssl_keyfile=str(key)),
        probe_campus_on_loopback(
            campus_factory, oauth_metadata_loopback_for_tests=True, oauth_metadata_ca_file=str(cert)
        ) as (base, _campus),
    ):
        mcp_url = f"{base}/api/mcp"
        student = BrowserStudent("student2", "demo", choose={"probe:read", "probe:write"})
        storage = MemoryStorage()
        results = await _call_all(mcp_url, provider_for(mcp_url, student, storage, metadata_url=metadata_url))
    assert storage.client is not None and storage.client.client_id == metadata_url
    assert student.last_consent is not None and "Metadata Assistant" in student.last_consent.html
    assert results["write_probe"].structured_content["scopes"] == ["probe:public", "probe:read", "probe:write"]
    assert results["write_probe"].structured_content["username"] == "student2"
