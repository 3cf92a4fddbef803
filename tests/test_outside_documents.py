"""Every document the server fetches is read up to a limit, never whole (issue 35, point 14).

Servers on loopback answer with documents far past their limits, streamed from one reused chunk
(so the test allocates no 60 MB either) and counting what they sent: the campus identity
provider's discovery document, keys (JWKS) and token answer (streamed, declared by
Content-Length, a gzip bomb; and a key set of too many keys), CAS's validation answer, the SAML
metadata and an app's client ID metadata document. A served campus answers each with a page in
the student's words, writes IT's words in its log (which document, its limit, the setting), stops
reading at the limit (the server sent a few MB of 60), and still answers afterwards.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import time
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from campus_mcp.oauth.testkit import (
    authorization_request,
    free_port,
    self_signed_certificate,
    serve_on_loopback,
)
from campus_mcp.testing import CampusFactory
from joserfc import jwt
from joserfc.jwk import ECKey
from litestar import Litestar, Request, Response, get, post
from litestar.response import Redirect, Stream

MB = 1024 * 1024
CHUNK = b" " * (64 * 1024)  # one chunk, sent again and again: the test holds 64 KB, not 60 MB
HUGE = 60 * MB
SIGN_IN_LIMIT = "CAMPUS_MCP_SIGN_IN_DOCUMENT_MAX_BYTES"
# What the sockets between the two servers held when the campus hung up (the kernel's buffers on
# loopback grow to several MB): a server that sent the limit and this stopped early, not at 60 MB.
IN_FLIGHT = 20 * MB
READ_AT_MOST = 2 * MB + IN_FLIGHT


class Sent:
    """What a fake server sent of its oversized documents."""

    def __init__(self) -> None:
        self.bytes = 0

    async def stream(self, prefix: bytes = b"", total: int = HUGE) -> AsyncIterator[bytes]:
        yield prefix
        self.bytes += len(prefix)
        while self.bytes < total:
            # A turn of the loop per chunk, so the server hears the client hang up and stops.
            await asyncio.sleep(0)
            self.bytes += len(CHUNK)
            yield CHUNK


def gzip_bomb(size: int) -> bytes:
    """``size`` bytes of spaces, gzipped (about 1/1000 of it), built from one reused chunk."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(CHUNK) for _ in range(size // len(CHUNK))]
    return b"".join(parts) + packer.flush()


def identity_provider(issuer: str, mode: dict[str, str], sent: Sent) -> Litestar:
    """A campus OpenID Connect provider whose discovery document or keys ``mode`` makes too large."""
    key = ECKey.generate_key("P-256", parameters={"kid": "idp-1"}, private=True)
    pending: dict[str, dict[str, str]] = {}
    bomb = gzip_bomb(HUGE)

    @get("/.well-known/openid-configuration")
    async def discovery() -> Any:
        if mode.get("discovery") == "streamed":
            return Stream(sent.stream(b'{"issuer": "' + issuer.encode() + b'", "padding": "'))
        return {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "jwks_uri": f"{issuer}/jwks",
        }

    @get("/authorize")
    async def authorize(request: Request[Any, Any, Any]) -> Redirect:
        query = request.query_params
        pending["the-code"] = {"nonce": query["nonce"], "challenge": query["code_challenge"]}
        return Redirect(query["redirect_uri"] + "?" + urlencode({"code": "the-code", "state": query["state"]}))

    @post("/token")
    async def token(request: Request[Any, Any, Any]) -> Any:
        form = await request.form()
        match mode.get("token"):
            case "streamed":
                return Stream(sent.stream(b'{"token_type": "Bearer", "access_token": "'))
            case "declared":
                return Stream(sent.stream(), headers={"Content-Length": str(HUGE)})
            case "gzip bomb":
                return Response(bomb, headers={"Content-Encoding": "gzip"}, media_type="application/json")
        grant = pending.pop(str(form["code"]))
        digest = hashlib.sha256(str(form["code_verifier"]).encode()).digest()
        assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == grant["challenge"]
        now = int(time.time())
        claims = {"iss": issuer, "aud": "campus-mcp", "sub": "s-42", "iat": now, "exp": now + 300}
        claims |= {"nonce": grant["nonce"], "preferred_username": "ada", "name": "Ada Lovelace"}
        id_token = jwt.encode({"alg": "ES256", "kid": "idp-1"}, claims, key)
        return {"access_token": "idp-access", "token_type": "Bearer", "expires_in": 300, "id_token": id_token}

    @get("/jwks")
    async def jwks() -> Any:
        public = key.as_dict(private=False)
        match mode.get("jwks"):
            case "streamed":
                return Stream(sent.stream(b'{"keys": [' + json.dumps(public).encode() + b"]"))
            case "declared":
                return Stream(sent.stream(), headers={"Content-Length": str(HUGE)})
            case "gzip bomb":
                return Response(bomb, headers={"Content-Encoding": "gzip"}, media_type="application/json")
            case "many keys":
                return {"keys": [public | {"kid": f"idp-{n}"} for n in range(51)]}
        return {"keys": [public]}

    return Litestar([discovery, authorize, token, jwks])


@pytest.fixture
async def oidc_campus(campus_factory: CampusFactory) -> AsyncIterator[tuple[str, dict[str, str], Sent]]:
    idp_port, port = free_port(), free_port()
    issuer = f"http://127.0.0.1:{idp_port}"
    campus = await campus_factory(
        plugins=[],
        public_url=f"http://127.0.0.1:{port}",
        oidc_issuer=issuer,
        oidc_client_id="campus-mcp",
        oidc_client_secret="idp-secret",
    )
    mode: dict[str, str] = {}
    sent = Sent()
    async with (
        serve_on_loopback(identity_provider(issuer, mode, sent), idp_port),
        serve_on_loopback(campus.app, port) as base,
    ):
        yield base, mode, sent


async def test_the_identity_providers_documents_are_read_up_to_their_limit(
    oidc_campus: tuple[str, dict[str, str], Sent], caplog: pytest.LogCaptureFixture
) -> None:
    base, mode, sent = oidc_campus
    caplog.set_level(logging.WARNING)
    cases = [
        ({"discovery": "streamed"}, "discovery"),
        ({"jwks": "streamed"}, "keys (JWKS)"),
        ({"jwks": "declared"}, "keys (JWKS)"),
        ({"jwks": "gzip bomb"}, "keys (JWKS)"),
        # authlib's client reads this one (its checks of the answer are kept): read up to the limit too.
        ({"token": "streamed"}, "token answer"),
        ({"token": "declared"}, "token answer"),
        ({"token": "gzip bomb"}, "token answer"),
    ]
    async with httpx.AsyncClient(timeout=60, follow_redirects=True) as browser:
        for case, document in cases:
            mode.clear()
            mode.update(case)
            sent.bytes = 0
            caplog.clear()
            page = await browser.get(f"{base}/login/oidc?next=/dashboard")
            assert page.status_code in (400, 502), (case, page.status_code)
            assert "sent more than this server reads" in page.text and "Tell your" in page.text, case
            assert "JWKS" not in page.text and SIGN_IN_LIMIT not in page.text  # IT's words go to the log
            logged = caplog.text
            assert f"the campus sign-in service's {document} at http://127.0.0.1:" in logged, (case, logged)
            assert (
                f"is larger than 2 MB, the most this server reads of it, so it was not read. If the document is right, raise {SIGN_IN_LIMIT}"
                in logged
            )
            # It stopped reading at the limit: of 60 MB, the server sent the limit and what was in flight.
            assert sent.bytes < READ_AT_MOST, (case, sent.bytes)
        mode.clear()
        mode["jwks"] = "many keys"
        caplog.clear()
        page = await browser.get(f"{base}/login/oidc?next=/dashboard")
        assert "sent more than this server reads" in page.text
        assert "list 51 keys, more than the 50 this server takes" in caplog.text
        assert "CAMPUS_MCP_JWKS_MAX_KEYS" in caplog.text
        # The server is still there, and signs the student in once the provider behaves.
        mode.clear()
        landed = await browser.get(f"{base}/login/oidc?next=/dashboard")
        assert landed.status_code == 200 and "Signed in as Ada Lovelace" in landed.text, landed.text[-500:]


def cas_server(sent: Sent) -> Litestar:
    @get("/cas/login")
    async def login(service: str) -> Redirect:
        return Redirect(service + "&" + urlencode({"ticket": "ST-1"}))

    @get("/cas/p3/serviceValidate")
    async def validate() -> Stream:
        return Stream(sent.stream(b"<cas:serviceResponse xmlns:cas='http://www.yale.edu/tp/cas'>"))

    return Litestar([login, validate])


@pytest.fixture
async def cas_campus(campus_factory: CampusFactory) -> AsyncIterator[tuple[str, Sent]]:
    # Built before the test runs: the app's logging set-up replaces the root logger's handlers,
    # pytest's log capture among them, and caplog puts its own back for the test itself.
    cas_port, port = free_port(), free_port()
    campus = await campus_factory(
        plugins=[], public_url=f"http://127.0.0.1:{port}", cas_server_url=f"http://127.0.0.1:{cas_port}/cas"
    )
    sent = Sent()
    async with serve_on_loopback(cas_server(sent), cas_port), serve_on_loopback(campus.app, port) as base:
        yield base, sent


async def test_a_cas_answer_is_read_up_to_its_limit(
    cas_campus: tuple[str, Sent], caplog: pytest.LogCaptureFixture
) -> None:
    base, sent = cas_campus
    caplog.set_level(logging.WARNING)
    async with httpx.AsyncClient(timeout=60, follow_redirects=True) as browser:
        page = await browser.get(f"{base}/login/cas?next=/dashboard")
        assert "sent more than this server reads" in page.text, page.text[-800:]
        assert "the CAS server's validation answer at http://127.0.0.1:" in caplog.text
        assert "ST-1" not in caplog.text  # the address is logged without its query (the ticket)
        assert sent.bytes < READ_AT_MOST
        assert (await browser.get(f"{base}/healthz")).status_code == 200


@pytest.fixture
def tls(tmp_path: Path) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path)


def documents_server(sent: Sent) -> Litestar:
    @get("/{name:str}")
    async def document(name: str) -> Stream:
        return Stream(sent.stream(b"<md:EntityDescriptor " if name.endswith(".xml") else b'{"client_id": "'))

    return Litestar([document])


@pytest.fixture
async def saml_campus(campus_factory: CampusFactory, tls: tuple[Path, Path]) -> AsyncIterator[tuple[str, int, Sent]]:
    cert, key = tls
    docs_port, port = free_port(), free_port()
    campus = await campus_factory(
        plugins=[],
        public_url=f"http://127.0.0.1:{port}",
        saml_idp_metadata=f"https://localhost:{docs_port}/idp-metadata.xml",
        oauth_metadata_loopback_for_tests=True,
        oauth_metadata_ca_file=str(cert),
    )
    sent = Sent()
    async with (
        serve_on_loopback(documents_server(sent), docs_port, ssl_certfile=str(cert), ssl_keyfile=str(key)),
        serve_on_loopback(campus.app, port) as base,
    ):
        yield base, docs_port, sent


async def test_saml_metadata_is_read_up_to_its_limit(
    saml_campus: tuple[str, int, Sent], caplog: pytest.LogCaptureFixture
) -> None:
    base, docs_port, sent = saml_campus
    caplog.set_level(logging.WARNING)
    async with httpx.AsyncClient(timeout=60) as browser:
        page = await browser.get(f"{base}/login/saml?next=/dashboard")
        assert page.status_code == 502 and "sent more than this server reads" in page.text
        assert (
            f"the identity provider's SAML metadata at https://localhost:{docs_port}/idp-metadata.xml "
            f"is larger than 2 MB" in caplog.text
        ), caplog.text
        assert SIGN_IN_LIMIT in caplog.text
        assert sent.bytes < READ_AT_MOST
        assert (await browser.get(f"{base}/healthz")).status_code == 200


async def test_a_client_id_metadata_document_is_read_up_to_its_limit(
    campus_factory: CampusFactory, tls: tuple[Path, Path]
) -> None:
    cert, key = tls
    docs_port, port = free_port(), free_port()
    campus = await campus_factory(
        plugins=[],
        public_url=f"http://127.0.0.1:{port}",
        oauth_metadata_loopback_for_tests=True,
        oauth_metadata_ca_file=str(cert),
    )
    sent = Sent()
    client_id = f"https://localhost:{docs_port}/app.json"
    async with (
        serve_on_loopback(documents_server(sent), docs_port, ssl_certfile=str(cert), ssl_keyfile=str(key)),
        serve_on_loopback(campus.app, port) as base,
        httpx.AsyncClient(timeout=60) as browser,
    ):
        request = authorization_request(base, client_id, "catalog:read")
        page = await browser.get(request.url)
        assert page.status_code == 400, page.text
        # The app's developer reads why: which document, its limit, what to do.
        assert (
            f"the client ID metadata document at https://localhost:{docs_port}/app.json is larger than 10 KB"
            in page.text
        )
        assert "Make the document smaller" in page.text
        assert sent.bytes < READ_AT_MOST
        assert (await browser.get(f"{base}/healthz")).status_code == 200
