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
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx


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


def free_port() -> int:
    """A port free on loopback right now (the server binds it a moment later)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def serve_on_loopback(app: Any, port: int, **config: Any) -> AsyncIterator[str]:
    """Run ``app`` under uvicorn on 127.0.0.1:``port`` in this event loop; yields its base URL."""
    import asyncio

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **config))
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
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
