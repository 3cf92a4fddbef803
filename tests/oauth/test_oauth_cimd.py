"""Client ID metadata documents: each refusal of the SSRF guard, and the one-hour copy.

The documents are served by the test over TLS on loopback. Loopback is itself refused by the
guard, so most tests turn on the test-only setting that allows it (and only it) and then check
the other rules; ``test_loopback_is_refused_without_the_test_setting`` checks that it stays
refused by default.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from campus_mcp.base.outbound import address_allowed as _address_allowed
from campus_mcp.base.settings import Settings
from campus_mcp.oauth.cimd import MetadataDocumentError, fetch_metadata_document
from campus_mcp.testing.oauth import TEST_REDIRECT_URI, free_port, self_signed_certificate, serve_on_loopback
from litestar import Litestar, Response, get


@dataclass
class DocumentServer:
    base: str
    hits: dict[str, int]
    settings: Settings

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"


def _document(url: str, **changes: Any) -> dict[str, Any]:
    return {
        "client_id": url,
        "client_name": "Doc App",
        "redirect_uris": [TEST_REDIRECT_URI],
        "token_endpoint_auth_method": "none",
        **changes,
    }


@pytest.fixture
async def documents(tmp_path: Path) -> AsyncIterator[DocumentServer]:
    cert, key = self_signed_certificate(tmp_path)
    port = free_port()
    base = f"https://localhost:{port}"
    hits: dict[str, int] = {}

    @get("/{name:str}", media_type="application/json")
    async def serve(name: str) -> Response[bytes]:
        hits[name] = hits.get(name, 0) + 1
        url = f"{base}/{name}"
        if name == "redirect.json":
            return Response(b"", status_code=302, headers={"Location": f"{base}/good.json"})
        if name == "slow.json":
            await asyncio.sleep(3)
        if name == "big.json":
            return Response(json.dumps(_document(url, padding="x" * 11_000)).encode())
        if name == "other.json":
            return Response(json.dumps(_document(f"{base}/good.json")).encode())
        if name == "http-redirect-uri.json":
            return Response(json.dumps(_document(url, redirect_uris=["http://app.example/cb"])).encode())
        if name == "secret.json":
            return Response(json.dumps(_document(url, token_endpoint_auth_method="client_secret_basic")).encode())
        if name == "not-json.json":
            return Response(b"<html>hello</html>")
        if name == "missing.json":
            return Response(b"{}", status_code=404)
        return Response(json.dumps(_document(url)).encode())

    settings = Settings(oauth_metadata_loopback_for_tests=True, oauth_metadata_ca_file=str(cert))
    async with serve_on_loopback(Litestar([serve]), port, ssl_certfile=str(cert), ssl_keyfile=str(key)):
        yield DocumentServer(base=base, hits=hits, settings=settings)


async def refusal(url: str, settings: Settings, **options: Any) -> str:
    with pytest.raises(MetadataDocumentError) as caught:
        await fetch_metadata_document(url, settings, **options)
    return str(caught.value)


async def test_a_good_document_is_accepted(documents: DocumentServer) -> None:
    record = await fetch_metadata_document(documents.url("good.json"), documents.settings)
    assert record.client_id == documents.url("good.json")
    assert record.client_name == "Doc App" and record.redirect_uris == (TEST_REDIRECT_URI,)


async def test_http_is_refused() -> None:
    assert "https" in await refusal("http://app.example/client.json", Settings())


async def test_a_port_other_than_443_is_refused() -> None:
    assert "port 443" in await refusal("https://app.example:8443/client.json", Settings())


async def test_private_and_loopback_addresses_are_refused() -> None:
    for url in (
        "https://10.1.2.3/client.json",
        "https://192.168.0.1/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/client.json",
        "https://localhost/client.json",
    ):
        assert "not public" in await refusal(url, Settings()), url


def test_every_address_of_a_name_must_be_public() -> None:
    settings = Settings()
    assert _address_allowed("93.184.215.14", settings)
    for address in ("127.0.0.1", "10.0.0.8", "172.16.0.1", "100.64.0.1", "::ffff:10.0.0.1", "fd00::1", "224.0.0.1"):
        assert not _address_allowed(address, settings), address


async def test_loopback_is_refused_without_the_test_setting(documents: DocumentServer) -> None:
    settings = Settings(oauth_metadata_ca_file=documents.settings.oauth_metadata_ca_file)
    reason = await refusal(documents.url("good.json"), settings)
    assert "port 443" in reason or "not public" in reason
    assert documents.hits.get("good.json", 0) == 0


async def test_redirects_are_not_followed(documents: DocumentServer) -> None:
    assert "redirects" in await refusal(documents.url("redirect.json"), documents.settings)
    assert documents.hits.get("good.json", 0) == 0


async def test_a_slow_server_times_out(documents: DocumentServer) -> None:
    # The same code path as the 5-second limit, with a shorter limit so the test stays quick.
    assert "did not arrive" in await refusal(documents.url("slow.json"), documents.settings, seconds=0.5)


async def test_more_than_10_kb_is_refused(documents: DocumentServer) -> None:
    assert "10 KB" in await refusal(documents.url("big.json"), documents.settings)


async def test_the_document_must_name_its_own_url(documents: DocumentServer) -> None:
    assert "different client_id" in await refusal(documents.url("other.json"), documents.settings)


async def test_its_redirect_uris_follow_the_rules(documents: DocumentServer) -> None:
    assert "must use https" in await refusal(documents.url("http-redirect-uri.json"), documents.settings)


async def test_a_confidential_client_is_refused(documents: DocumentServer) -> None:
    assert "public" in await refusal(documents.url("secret.json"), documents.settings)


async def test_not_json_and_missing_are_refused(documents: DocumentServer) -> None:
    assert "not JSON" in await refusal(documents.url("not-json.json"), documents.settings)
    assert "HTTP 404" in await refusal(documents.url("missing.json"), documents.settings)


async def test_a_fetched_document_is_kept_for_an_hour(documents: DocumentServer, campus_factory: Any) -> None:
    campus = await campus_factory(
        plugins=[],
        oauth_metadata_loopback_for_tests=True,
        oauth_metadata_ca_file=documents.settings.oauth_metadata_ca_file,
    )
    from campus_mcp.base.db import utcnow
    from campus_mcp.oauth import build_oauth
    from campus_mcp.oauth.models import OAuthClient
    from sqlalchemy import update

    service = build_oauth(campus.registry, campus.sessions)
    url = documents.url("good.json")
    assert (await service.client(url)) is not None
    assert (await service.client(url)) is not None
    assert documents.hits["good.json"] == 1
    async with campus.sessions() as session, session.begin():
        from datetime import timedelta

        await session.execute(update(OAuthClient).values(fetched_at=utcnow() - timedelta(minutes=61)))
    assert (await service.client(url)) is not None
    assert documents.hits["good.json"] == 2
