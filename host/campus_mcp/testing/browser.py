"""One student's browser on a harness's test client, for tests of a plugin's dashboard pages.

A harness's HTTP client runs the app's lifespan (and its MCP session manager) once, so several
students take turns on one client: each :class:`StudentBrowser` keeps a cookie jar of its own and
lends it to the client for each request. ``sign_in`` goes through the real login form, CSRF
field included, as a student's browser does.
"""

from __future__ import annotations

from typing import Any, Self

import httpx

from campus_mcp.testing.oauth import parse_forms

# The demo students' password (``CAMPUS_MCP_DEMO_PASSWORD``'s default): test campuses only.
DEMO_PASSWORD = "demo"  # noqa: S105


class StudentBrowser:
    """``browser = await StudentBrowser(client).sign_in("student1")``, then ``get`` and ``post``."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.cookies = httpx.Cookies()

    async def request(self, method: str, url: str, **options: Any) -> httpx.Response:
        self.client.cookies = self.cookies
        try:
            return await self.client.request(method, url, **options)
        finally:
            self.cookies = httpx.Cookies(self.client.cookies)

    async def get(self, url: str, **options: Any) -> httpx.Response:
        return await self.request("GET", url, **options)

    async def post(self, url: str, **options: Any) -> httpx.Response:
        return await self.request("POST", url, **options)

    async def sign_in(self, username: str, password: str = DEMO_PASSWORD) -> Self:
        """Sign in through the login form (a demo student's password is ``demo`` by default)."""
        page = await self.get("/login", params={"next": "/dashboard"})
        login = [form for form in parse_forms(page.text) if form.action == "/login"] or parse_forms(page.text)[-1:]
        assert login, "the login page has no form"
        data = {field.name: field.value for field in login[0].fields if field.kind == "hidden"}
        signed_in = await self.post("/login", data=data | {"username": username, "password": password})
        assert signed_in.status_code in (200, 303), signed_in.text
        return self
