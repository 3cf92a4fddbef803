"""Personal access tokens over real HTTP: made on the dashboard, shown once, stored hashed, used as a
bearer token on ``/api/mcp`` and the student REST routes with exactly its scopes, and revoked by
Disconnect under Connected apps (the next request gets the 401 challenge). Nothing of the secret
reaches the logs.

The campus is the demo campus with every installed family, sign-in required, served on loopback.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import pytest
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.oauth.personal_tokens import PersonalToken
from campus_mcp.testing import TestDatabases, harness_app
from campus_mcp.testing import test_settings as campus_settings
from campus_mcp.testing.browser import StudentBrowser
from campus_mcp.testing.oauth import free_port, parse_forms, serve_on_loopback
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import select

TOKEN = re.compile(r"cmcp_pat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")


class Site:
    def __init__(self, base: str, registry: Registry, app: Any) -> None:
        self.base = base
        self.registry = registry
        self.app = app


@pytest.fixture(scope="module")
async def site(campus_databases: TestDatabases) -> AsyncIterator[Site]:
    port = free_port()
    url = await campus_databases.demo_copy()
    registry = load_registry(campus_settings(url, anonymous_access=False, public_url=f"http://127.0.0.1:{port}"))
    await asyncio.to_thread(upgrade, registry)
    app = harness_app(registry)
    try:
        async with serve_on_loopback(app, port) as base:
            yield Site(base, registry, app)
    finally:
        await app.state.deployment.engine.dispose()
        await campus_databases.drop(url)


def token_form(html: str) -> Any:
    (form,) = [form for form in parse_forms(html) if form.action == "/dashboard/tokens"]
    return form


async def make_token(browser: StudentBrowser, name: str, scopes: list[str], days: str = "30") -> httpx.Response:
    form = token_form((await browser.get("/dashboard/tokens")).text)
    csrf = next(field.value for field in form.fields if field.name == "csrf_token")
    data = {"csrf_token": csrf, "name": name, "expiry_days": days, "scope_choice": scopes}
    posted = await browser.post("/dashboard/tokens", data=data)
    if posted.status_code != 303:
        return posted  # a refused form answers with the form again
    # Post/redirect/get: the token is shown on the page the post redirects to, never on the post's answer.
    assert posted.headers["location"] == "/dashboard/tokens" and not TOKEN.findall(posted.text)
    return await browser.get(posted.headers["location"])


async def test_the_dashboard_makes_a_token_shows_it_once_and_keeps_only_a_hash(site: Site) -> None:
    async with httpx.AsyncClient(base_url=site.base, timeout=60) as http:
        browser = await StudentBrowser(http).sign_in("student2")
        page = await browser.get("/dashboard/tokens")
        assert page.status_code == 200
        boxes = token_form(page.text).checkboxes
        # Every scope of the enabled families that is not always on or reserved, write scopes unchecked.
        offered = {name for name, scope in site.registry.scopes.items() if not (scope.always_on or scope.reserved)}
        assert set(boxes) == offered
        for name, checked in boxes.items():
            assert checked is (not site.registry.scopes[name].writes), name
        assert "catalog" not in boxes and "Always included" in page.text

        made = await make_token(browser, "  my   timetable script ", ["schedule:read", "not-a-scope"])
        assert made.status_code == 200
        assert made.headers["cache-control"] == "no-store"
        (token,) = TOKEN.findall(made.text)
        assert "shown only this once" in made.text

        again = await browser.get("/dashboard/tokens")
        assert token not in again.text and token[9:] not in again.text
        assert "my timetable script" in again.text
        settings = await browser.get("/dashboard/settings")
        card = re.search(r'<section class="card" id="connected-apps".*?</section>', settings.text, re.S)
        assert card is not None and "my timetable script" in card.group(0)
        assert 'aria-label="Disconnect my timetable script"' in card.group(0)

        # The row keeps a keyed hash: neither the token nor its secret part is stored.
        async with site.app.state.deployment.session() as session:
            row = (
                await session.scalars(select(PersonalToken).where(PersonalToken.name == "my timetable script"))
            ).one()
        secret = token[len("cmcp_pat_") + 13 :]  # after the prefix and the 12-character id
        assert secret not in repr(vars(row)) and row.secret_hash != secret
        # A box that was not offered grants nothing; the public scopes come with every token.
        assert row.scope.split() == ["catalog", "dining", "schedule:read"]

        # A forged expiry, an empty name and a form without its CSRF field make no token.
        for data, says in (
            ({"name": "x", "days": "3650"}, "Choose an expiry of 7, 30, 90 days."),
            ({"name": "   ", "days": "7"}, "Give the token a name"),
        ):
            refused = await make_token(browser, data["name"], ["schedule:read"], data["days"])
            assert refused.status_code == 200 and says in refused.text and not TOKEN.findall(refused.text)
        forged = await browser.post("/dashboard/tokens", data={"name": "no csrf", "expiry_days": "7"})
        assert "The form expired" in forged.text and not TOKEN.findall(forged.text)


async def test_a_token_acts_with_exactly_its_scopes_until_disconnected(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    mcp_url = f"{site.base}/api/mcp"
    async with httpx.AsyncClient(base_url=site.base, timeout=60) as http:
        browser = await StudentBrowser(http).sign_in("student1")
        (token,) = TOKEN.findall((await make_token(browser, "http script", ["schedule:read"])).text)
        bearer = {"Authorization": f"Bearer {token}"}

        async with httpx2.AsyncClient(headers=bearer, timeout=60) as mcp_http:
            for mode in ("legacy", "2026-07-28"):
                async with Client(streamable_http_client(mcp_url, http_client=mcp_http), mode=mode) as client:  # type: ignore[arg-type]
                    courses = await client.call_tool("my_courses", {})
                    assert not courses.is_error, courses.content
                    refused = await client.call_tool("list_friends", {})
                    assert refused.is_error
                    assert "list_friends needs the permission 'friends:read'" in refused.content[0].text  # type: ignore[union-attr]

        # The REST twins hold the token to the same scopes (no cookie: a script).
        async with httpx.AsyncClient(base_url=site.base, headers=bearer, timeout=60) as script:
            assert (await script.get("/api/v1/me/courses")).status_code == 200
            friends = await script.get("/api/v1/me/friends")
            assert friends.status_code == 403 and "friends:read" in friends.text
            # A token opens no dashboard page: those are the signed-in browser's.
            assert (await script.get("/dashboard/tokens")).status_code in (302, 303)

            # Disconnect under Connected apps revokes it.
            settings = await browser.get("/dashboard/settings")
            assert 'aria-label="Disconnect http script"' in settings.text
            (form,) = [f for f in parse_forms(settings.text) if f.action == "/dashboard/tokens/revoke"]
            fields = {field.name: field.value for field in form.fields if field.kind == "hidden"}
            gone = await browser.post("/dashboard/tokens/revoke", data=fields)
            assert gone.status_code == 303
            # The link carries the token's id, not its name (issue 30: a link's own words never show).
            assert gone.headers["location"] == f"/dashboard/settings?disconnected={fields['token_id']}#connected-apps"
            assert "Disconnected http script." in (await browser.get(gone.headers["location"])).text
            assert "http script" not in (await browser.get("/dashboard/tokens")).text.split("Your tokens")[1]

            rest = await script.get("/api/v1/me/courses")
            assert rest.status_code == 401 and "invalid_token" in rest.headers["www-authenticate"]
        async with httpx.AsyncClient(timeout=60) as raw:
            mcp = await raw.post(
                mcp_url,
                headers={**bearer, "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
        assert mcp.status_code == 401
        assert 'error="invalid_token"' in mcp.headers["www-authenticate"]
        assert "resource_metadata=" in mcp.headers["www-authenticate"]

    secret = token[len("cmcp_pat_") + 13 :]  # after the prefix and the 12-character id
    logged = caplog.text
    assert logged, "nothing was logged: this check would prove nothing"
    assert token not in logged and secret[:12] not in logged and secret[-12:] not in logged
