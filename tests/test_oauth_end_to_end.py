"""The real server on loopback, signed in to by the MCP SDK's OAuthClientProvider.

Discovery from the 401, registration (RFC 7591) or a client ID metadata document served by the
test over TLS on loopback, PKCE, the real login and consent forms submitted over HTTP by a
browser stand-in, the code exchange, then tool calls with the token.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from campus_mcp import PluginInfo, Scope, Tool, hookimpl
from campus_mcp.oauth.testkit import BrowserStudent, callback_params, free_port, serve_on_loopback
from campus_mcp.testing import CampusFactory
from litestar import Litestar, get
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import BaseModel

REDIRECT_URI = "http://127.0.0.1:9/callback"


class NoArgs(BaseModel):
    pass


class WhoAmI(BaseModel):
    username: str | None
    scopes: list[str]


async def whoami(ctx: Any, _args: NoArgs) -> WhoAmI:
    return WhoAmI(username=ctx.principal.username, scopes=sorted(ctx.principal.scopes))


def _tool(name: str, scope: str) -> Tool:
    return Tool(
        name=name,
        title=name,
        description=f"Says who is calling ({scope}).",
        scope=scope,
        input_model=NoArgs,
        output_model=WhoAmI,
        handler=whoami,
    )


class PermissionProbe:
    """A tool per kind of scope: public (always on), read, write. No installed plugin is loaded."""

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="probe", version="1", title="Probe", description="Tools for the sign-in tests.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [
            Scope(name="probe:public", description="Read public probe data.", always_on=True),
            Scope(name="probe:read", description="Read your probe data.", writes=False),
            Scope(name="probe:write", description="Change your probe data.", writes=True, starts_checked=False),
        ]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [
            _tool("public_probe", "probe:public"),
            _tool("read_probe", "probe:read"),
            _tool("write_probe", "probe:write"),
        ]


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def provider_for(
    mcp_url: str, student: BrowserStudent, storage: MemoryStorage, *, metadata_url: str | None = None
) -> OAuthClientProvider:
    landed: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:
        landed.clear()
        landed.update(callback_params(await student.approve(url)))

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=landed.get("code", ""), state=landed.get("state"), iss=landed.get("iss"))

    return OAuthClientProvider(
        server_url=mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name="Probe Assistant",
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=metadata_url,
    )


async def _call_all(mcp_url: str, provider: OAuthClientProvider) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(mcp_url, http_client=http)) as client,
    ):
        tools = await client.list_tools()
        results["tools"] = sorted(t.name for t in tools.tools)
        for name in ("public_probe", "read_probe", "write_probe"):
            results[name] = await client.call_tool(name, {})
    return results


@pytest.fixture
async def live_campus(campus_factory: CampusFactory) -> AsyncIterator[str]:
    port = free_port()
    campus = await campus_factory(
        plugins=[],
        extra_plugins=[("probe", PermissionProbe())],
        demo=True,
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
    )
    async with serve_on_loopback(campus.app, port) as base:
        yield base


async def test_sign_in_with_registration_then_call_tools(live_campus: str) -> None:
    mcp_url = f"{live_campus}/api/mcp"
    student = BrowserStudent("student1", "demo")  # keeps the page's boxes: reads checked, writes not
    storage = MemoryStorage()
    results = await _call_all(mcp_url, provider_for(mcp_url, student, storage))

    assert student.last_consent is not None
    assert student.last_consent.boxes == {"probe:read": True, "probe:write": False}
    assert results["tools"] == ["public_probe", "read_probe", "write_probe"]
    assert results["public_probe"].structured_content["username"] == "student1"
    granted = results["read_probe"].structured_content["scopes"]
    assert granted == ["probe:public", "probe:read"]  # exactly what was checked, plus the always-on scope
    denied = results["write_probe"]
    assert denied.is_error
    assert "probe:write" in denied.content[0].text and "disconnect" in denied.content[0].text.lower()
    assert storage.client is not None and storage.client.client_id.startswith("cmcp_")
    assert storage.tokens is not None and storage.tokens.refresh_token and storage.tokens.expires_in == 3600


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1, for the metadata document server."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path]:
    return _self_signed(tmp_path)


def metadata_document_app(document: dict[str, Any]) -> Litestar:
    @get("/oauth/client.json", media_type="application/json")
    async def client_json() -> bytes:
        return json.dumps(document).encode()

    return Litestar([client_json])


async def test_sign_in_with_a_client_id_metadata_document(
    campus_factory: CampusFactory, tls_files: tuple[Path, Path]
) -> None:
    cert, key = tls_files
    doc_port, port = free_port(), free_port()
    metadata_url = f"https://localhost:{doc_port}/oauth/client.json"
    document = {
        "client_id": metadata_url,
        "client_name": "Metadata Assistant",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    campus = await campus_factory(
        plugins=[],
        extra_plugins=[("probe", PermissionProbe())],
        demo=True,
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
        oauth_metadata_loopback_for_tests=True,
        oauth_metadata_ca_file=str(cert),
    )
    async with (
        serve_on_loopback(metadata_document_app(document), doc_port, ssl_certfile=str(cert), ssl_keyfile=str(key)),
        serve_on_loopback(campus.app, port) as base,
    ):
        mcp_url = f"{base}/api/mcp"
        student = BrowserStudent("student2", "demo", choose={"probe:read", "probe:write"})
        storage = MemoryStorage()
        results = await _call_all(mcp_url, provider_for(mcp_url, student, storage, metadata_url=metadata_url))
    assert storage.client is not None and storage.client.client_id == metadata_url
    assert student.last_consent is not None and "Metadata Assistant" in student.last_consent.html
    assert results["write_probe"].structured_content["scopes"] == ["probe:public", "probe:read", "probe:write"]
    assert results["write_probe"].structured_content["username"] == "student2"
