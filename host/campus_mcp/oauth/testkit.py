"""A student at a browser, for tests: follows the sign-in, fills the real forms, returns the redirect.

Tests of the OAuth flow (and plugin authors' end-to-end tests) hand this to the MCP SDK's
``OAuthClientProvider`` as its redirect handler: it opens the authorization URL over HTTP, signs
in on the login form, checks the boxes it was told to on the consent page and submits it,
exactly as the HTML says (hidden fields, CSRF token and all). No server internals are touched.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import BaseModel

from campus_mcp.contributions import PluginInfo, Scope, Tool
from campus_mcp.hookspecs import hookimpl


@dataclasses.dataclass
class Field:
    name: str
    value: str
    kind: str
    checked: bool = False


@dataclasses.dataclass
class Form:
    action: str
    method: str
    fields: list[Field] = dataclasses.field(default_factory=list)
    buttons: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def checkboxes(self) -> dict[str, bool]:
        return {f.value: f.checked for f in self.fields if f.kind == "checkbox"}


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(action=values.get("action", ""), method=values.get("method", "get").lower()))
        elif tag == "input" and self.forms and "name" in values:
            kind = values.get("type", "text")
            self.forms[-1].fields.append(Field(values["name"], values.get("value", ""), kind, "checked" in values))
        elif tag == "button" and self.forms and "name" in values:
            self.forms[-1].buttons.append((values["name"], values.get("value", "")))


def parse_forms(html: str) -> list[Form]:
    parser = _FormParser()
    parser.feed(html)
    return parser.forms


@dataclasses.dataclass
class ConsentSeen:
    """What the consent page offered: each checkbox and whether it started checked."""

    boxes: dict[str, bool]
    html: str


class BrowserStudent:
    """Signs in as ``username`` and answers the consent page.

    ``choose`` decides the boxes: None keeps them as the page set them, a set checks exactly
    those. ``deny`` presses Deny. ``last_consent`` records what the page offered.
    """

    def __init__(
        self,
        username: str,
        password: str,
        *,
        choose: Iterable[str] | None = None,
        deny: bool = False,
    ) -> None:
        self.username = username
        self.password = password
        self.choose = set(choose) if choose is not None else None
        self.deny = deny
        self.last_consent: ConsentSeen | None = None
        self.cookies = httpx.Cookies()

    async def approve(self, authorize_url: str) -> str:
        """Open the authorization URL and return where the server finally sends the browser."""
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(authorize_url))
        async with httpx.AsyncClient(cookies=self.cookies, follow_redirects=False, timeout=30) as browser:
            response = await browser.get(authorize_url)
            for _ in range(10):
                if response.is_redirect:
                    location = urljoin(str(response.url), response.headers["location"])
                    if not location.startswith(origin):
                        return location  # back to the app: done
                    response = await browser.get(location)
                    continue
                forms = parse_forms(response.text)
                login = next((f for f in forms if f.action == "/login"), None)
                consent = next((f for f in forms if f.action.endswith("/api/oauth/authorize")), None)
                if login is not None:
                    data = [(f.name, f.value) for f in login.fields if f.kind == "hidden"]
                    data += [("username", self.username), ("password", self.password)]
                    response = await _post_form(browser, urljoin(origin, login.action), data)
                elif consent is not None:
                    self.last_consent = ConsentSeen(boxes=consent.checkboxes, html=response.text)
                    data = [(f.name, f.value) for f in consent.fields if f.kind == "hidden"]
                    for f in consent.fields:
                        if f.kind == "checkbox":
                            ticked = f.checked if self.choose is None else f.value in self.choose
                            if ticked:
                                data.append((f.name, f.value))
                    data.append(("decision", "deny" if self.deny else "allow"))
                    response = await _post_form(browser, urljoin(origin, consent.action), data)
                else:
                    raise AssertionError(f"unexpected page (HTTP {response.status_code}): {response.text[:500]}")
            raise AssertionError("the sign-in did not finish within 10 pages")


async def _post_form(browser: httpx.AsyncClient, url: str, data: list[tuple[str, str]]) -> httpx.Response:
    # Repeated names (one per checked box) need the pairs encoded by hand.
    return await browser.post(
        url, content=urlencode(data), headers={"Content-Type": "application/x-www-form-urlencoded"}
    )


def callback_params(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


# Where free_port looks: above the registered services most machines run (PostgreSQL 5432, Redis
# 6379, the 8000s), below the kernel's ephemeral range.
FIRST_TEST_PORT = 20000


def ephemeral_ports() -> range:
    """The ports the kernel gives outgoing connections and ``bind(0)`` (Linux's own default if unread)."""
    try:
        low, high = (int(part) for part in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def free_port() -> int:
    """A loopback port nobody listens on now, for a server that binds it a moment later.

    Not the kernel's ``bind(0)`` pick: that port comes from the ephemeral range, which every outgoing
    connection draws its own port from too (each database connection, each HTTP client), and on a
    busy machine one of them took the port before the test's server bound it ("address already in
    use", CI with two test passes side by side). A port below that range is never given to a
    connection; a random one of some ten thousand, checked free, is left to the other tests' servers.
    """
    import random
    import socket

    below = range(FIRST_TEST_PORT, ephemeral_ports().start)  # empty if that range starts low
    for _ in range(200 if below else 0):
        port = random.choice(below)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    # Every try was taken, or there is no room below the range: the kernel's own pick.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        chosen: int = sock.getsockname()[1]
        return chosen


@contextlib.asynccontextmanager
async def serve_on_loopback(app: Any, port: int, *, host: str = "127.0.0.1", **config: Any) -> AsyncIterator[str]:
    """Run ``app`` under uvicorn on ``host`` (127.0.0.1, or ``::1`` for IPv6 clients), port ``port``,
    in this event loop; yields its base URL."""
    import asyncio

    import uvicorn

    # uvicorn closes a keep-alive connection idle for 5 s; on a loaded CI machine a test's next
    # request can meet that close on the reused connection (httpx.ReadError). A test's server keeps
    # its connections a minute.
    config.setdefault("timeout_keep_alive", 60)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", **config))
    # The test process owns the signals; uvicorn must not replace pytest's handlers.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the server stopped while starting")
            await asyncio.sleep(0.01)
        scheme = "https" if config.get("ssl_certfile") else "http"
        authority = f"[{host}]" if ":" in host else host
        yield f"{scheme}://{authority}:{port}"
    finally:
        server.should_exit = True
        await task


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1 (its own CA), and its key: (cert, key)."""
    import datetime
    import ipaddress

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


TEST_REDIRECT_URI = "http://127.0.0.1:9/callback"


class NoArgs(BaseModel):
    pass


class WhoAmI(BaseModel):
    username: str | None
    scopes: list[str]
    # What the MCP SDK's get_access_token() says (set by the endpoint for a bearer token).
    sdk_subject: str | None = None


async def whoami(ctx: Any, _args: NoArgs) -> WhoAmI:
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return WhoAmI(
        username=ctx.principal.username,
        scopes=sorted(ctx.principal.scopes),
        sdk_subject=token.subject if token else None,
    )


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


class ScopeProbe:
    """A throwaway plugin for sign-in tests: a tool per kind of scope (public, read, write).

    Load it as ``extra_plugins=[("probe", ScopeProbe())]`` with ``plugins=[]``.
    """

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
            redirect_uris=[TEST_REDIRECT_URI],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",  # noqa: S106 - an auth method name
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=metadata_url,
    )


@contextlib.asynccontextmanager
async def probe_campus_on_loopback(campus_factory: Any, **settings: Any) -> AsyncIterator[tuple[str, Any]]:
    """The sign-in tests' campus, served on loopback: the :class:`ScopeProbe` alone, the demo
    students, sign-in required, its public URL the loopback address it is served on.

    ``campus_factory`` is the kit's fixture; ``settings`` are more host settings
    (``step_up_clients=[...]``). Yields the base URL and the campus's harness.
    """
    port = free_port()
    campus = await campus_factory(
        plugins=[],
        extra_plugins=[("probe", ScopeProbe())],
        demo=True,
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
        **settings,
    )
    async with serve_on_loopback(campus.app, port) as base:
        yield base, campus


async def register_app(http: httpx.AsyncClient, base: str, client_name: str) -> str:
    """Register an app (RFC 7591) redirecting to :data:`TEST_REDIRECT_URI`; its client ID."""
    response = await http.post(
        f"{base}/api/oauth/register", json={"redirect_uris": [TEST_REDIRECT_URI], "client_name": client_name}
    )
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


@dataclasses.dataclass(frozen=True)
class AuthorizationRequest:
    """An app's authorization request with PKCE (S256): the URL a student opens, and the verifier
    the app keeps for the code exchange."""

    base: str
    client_id: str
    verifier: str
    url: str

    @property
    def resource(self) -> str:
        return f"{self.base}/api/mcp"


def authorization_request(base: str, client_id: str, scope: str, *, state: str = "s") -> AuthorizationRequest:
    """The authorization URL an app sends a student to for ``scope``, for the MCP endpoint."""
    import base64
    import hashlib
    import secrets

    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": TEST_REDIRECT_URI,
        "scope": scope,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{base}/api/mcp",
    }
    return AuthorizationRequest(base, client_id, verifier, f"{base}/api/oauth/authorize?" + urlencode(query))


async def login_next(browser: httpx.AsyncClient, request: AuthorizationRequest) -> str:
    """Open an app's authorization URL with no one signed in, as the app's browser does: the ``next``
    the server sends it to the login page with (the authorization request, path and query). The
    browser keeps the session that names the app to the login page."""
    response = await browser.get(request.url, follow_redirects=False)
    assert response.is_redirect and response.headers["location"].startswith("/login?"), response.text
    return parse_qs(urlsplit(response.headers["location"]).query)["next"][0]


def link_to(html: str, text: str) -> str | None:
    """The address of the page's link whose text is ``text`` (unescaped), or None."""
    import html as html_lib
    import re

    found = re.search(rf'<a [^>]*href="([^"]*)"[^>]*>{re.escape(html_lib.escape(text))}</a>', html)
    return html_lib.unescape(found.group(1)) if found else None


async def exchange_code(
    http: httpx.AsyncClient, request: AuthorizationRequest, callback_url: str, *, send_resource: bool = True
) -> httpx.Response:
    """The app's code exchange for the code in ``callback_url`` (where the student was sent back to).

    ``send_resource=False`` leaves out the ``resource`` parameter (RFC 8707), as a client may.
    """
    data = {
        "grant_type": "authorization_code",
        "code": callback_params(callback_url)["code"],
        "redirect_uri": TEST_REDIRECT_URI,
        "client_id": request.client_id,
        "code_verifier": request.verifier,
    }
    if send_resource:
        data["resource"] = request.resource
    return await http.post(f"{request.base}/api/oauth/token", data=data)
