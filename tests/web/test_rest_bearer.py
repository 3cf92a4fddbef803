"""The REST API's bearer tokens, as its OpenAPI document declares them (issue 14 points 3 and 4).

REST takes a personal access token (``cmcp_pat_…``) or the dashboard session; an OAuth access
token is bound to the MCP resource ``/api/mcp`` (RFC 8707) and REST refuses it with the ``401`` the
document declares, saying what to use instead. A missing scope tells a token's owner to make a
new token on the Access tokens page, and an app's owner to connect the app again. A "needs a
signed-in student" refusal on MCP is counted as REST counts it (``scope="signed_in"``).

One demo campus with every family, and a probe family whose public tool reads the student,
served once on loopback for the module.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jsonschema
import pytest_asyncio
from campus_mcp import hookimpl
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.base.metrics import value as metric_value
from campus_mcp.oauth.token_cli import issue
from campus_mcp.plugin.contributions import PluginInfo, Scope, Tool
from campus_mcp.testing import TestDatabases, harness_app
from campus_mcp.testing import test_settings as campus_settings
from campus_mcp.testing.browser import StudentBrowser
from campus_mcp.testing.oauth import NoArgs, WhoAmI, free_port, parse_forms, serve_on_loopback

PAT = re.compile(r"cmcp_pat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
PROBE_TOOL = "probe_my_name"


async def my_name(ctx: Any, _args: NoArgs) -> WhoAmI:
    ctx.user_id  # noqa: B018 - the tool reads the student: an anonymous caller is refused here
    return WhoAmI(username=ctx.principal.username, scopes=sorted(ctx.principal.scopes))


class SignedInProbe:
    """A family whose one tool is public by scope but reads the student (``ToolContext.user_id``)."""

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="probe", version="1", title="Probe", description="A tool that needs a student.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [Scope(name="probe:public", description="Read public probe data.", always_on=True)]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [
            Tool(
                name=PROBE_TOOL,
                title="My name",
                description="Says the signed-in student's name.",
                scope="probe:public",
                input_model=NoArgs,
                output_model=WhoAmI,
                handler=my_name,
            )
        ]


@dataclasses.dataclass(frozen=True)
class Site:
    base: str
    registry: Registry
    app: Any
    document: dict[str, Any]


@pytest_asyncio.fixture(scope="module")
async def site(campus_databases: TestDatabases) -> AsyncIterator[Site]:
    port = free_port()
    url = await campus_databases.demo_copy()
    settings = campus_settings(url, public_url=f"http://127.0.0.1:{port}")
    registry = load_registry(settings, [("probe", SignedInProbe())])
    await asyncio.to_thread(upgrade, registry)
    app = harness_app(registry)
    try:
        async with serve_on_loopback(app, port) as base, httpx.AsyncClient(base_url=base, timeout=60) as http:
            document = (await http.get("/api/v1/openapi.json")).json()
            yield Site(base, registry, app, document)
    finally:
        await app.state.deployment.engine.dispose()
        await campus_databases.drop(url)


async def personal_token(http: httpx.AsyncClient, username: str, scopes: list[str]) -> str:
    """A token made on the dashboard's Access tokens page, as the student makes one."""
    browser = await StudentBrowser(http).sign_in(username)
    (form,) = [f for f in parse_forms((await browser.get("/dashboard/tokens")).text) if f.action == "/dashboard/tokens"]
    csrf = next(field.value for field in form.fields if field.name == "csrf_token")
    data = {"csrf_token": csrf, "name": "rest bearer test", "expiry_days": "7", "scope_choice": scopes}
    # The post redirects to the page that shows the token once (post/redirect/get).
    (token,) = PAT.findall((await browser.post("/dashboard/tokens", data=data, follow_redirects=True)).text)
    return token


def declared(site: Site, method: str, path: str, status: int) -> dict[str, Any]:
    """The schema the document declares for one answer, with the components it refers to."""
    response = site.document["paths"][path][method]["responses"][str(status)]
    schema: dict[str, Any] = response["content"]["application/json"]["schema"]
    return {**schema, "components": site.document["components"]}


async def mcp_call(http: httpx.AsyncClient, tool: str, token: str | None) -> str:
    """A ``tools/call`` over HTTP; the tool error's text (the call must be refused)."""
    headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}}
    answer = await http.post("/api/mcp", content=json.dumps(body), headers=headers)
    assert answer.status_code == 200, answer.text[:300]
    result = answer.json()["result"]
    assert result.get("isError") is True, result
    return str(result["content"][0]["text"])


async def test_the_document_declares_the_personal_access_token_rest_takes(site: Site) -> None:
    schemes = site.document["components"]["securitySchemes"]
    # No OAuth flow: an OAuth token is the MCP server's, and REST refuses it (below).
    assert set(schemes) == {"personal_token", "dashboard_session"}
    token = schemes["personal_token"]
    assert (token["type"], token["scheme"]) == ("http", "bearer")
    assert token["bearerFormat"].startswith("cmcp_pat_")
    assert f"{site.base}/dashboard/tokens" in token["description"] and "Access tokens" in token["description"]
    for name, scope in site.registry.scopes.items():
        if not scope.always_on:
            assert f"`{name}`" in token["description"], name
    me = site.document["paths"]["/api/v1/me/courses"]["get"]
    assert me["security"] == [{"personal_token": ["schedule:read"]}, {"dashboard_session": []}]
    catalog = site.document["paths"]["/api/v1/catalog/terms"]["get"]
    assert catalog["security"][0] == {} and {"personal_token": ["catalog"]} in catalog["security"]
    for operation in (me, catalog):
        assert "401" in operation["responses"]


async def test_a_personal_access_token_works_and_a_missing_scope_says_make_a_new_token(site: Site) -> None:
    async with httpx.AsyncClient(base_url=site.base, timeout=60) as http:
        token = await personal_token(http, "student1", ["schedule:read"])
    tokens_page = f"{site.base}/dashboard/tokens"
    async with httpx.AsyncClient(
        base_url=site.base, headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as script:
        courses = await script.get("/api/v1/me/courses")
        assert courses.status_code == 200, courses.text[:300]
        jsonschema.validate(courses.json(), declared(site, "get", "/api/v1/me/courses", 200))

        refused = await script.get("/api/v1/me/friends")
        assert refused.status_code == 403
        jsonschema.validate(refused.json(), declared(site, "get", "/api/v1/me/friends", 403))
        message = refused.json()["message"]
        assert "list_friends needs the permission 'friends:read'" in message
        assert "personal access token" in message and tokens_page in message, message
        assert "connect it again" not in message and "consent page" not in message
    # The same token on MCP: the same words.
    async with httpx.AsyncClient(base_url=site.base, timeout=60) as http:
        assert await mcp_call(http, "list_friends", token) == message


async def test_an_oauth_access_token_gets_the_documented_401_on_rest_and_works_on_mcp(site: Site) -> None:
    token, _ = await issue(site.app.state.deployment, "student1", ["schedule:read"], 10)
    bearer = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=site.base, timeout=60) as http:
        for path in ("/api/v1/me/courses", "/api/v1/catalog/terms"):
            refused = await http.get(path, headers=bearer)
            assert refused.status_code == 401, f"{path}: {refused.status_code} {refused.text[:300]}"
            jsonschema.validate(refused.json(), declared(site, "get", path, 401))
            challenge = refused.headers["www-authenticate"]
            assert 'error="invalid_token"' in challenge and "personal access token" in challenge
            says = refused.json()["error_description"]
            assert "personal access token" in says and f"{site.base}/dashboard/tokens" in says, says
            assert "/api/mcp" in says
            assert token not in refused.text
        # Without the header, the public route answers anyone.
        assert (await http.get("/api/v1/catalog/terms")).status_code == 200

        # On the MCP resource it is bound to, it works, and a missing scope is an app's to fix.
        listed = await http.post(
            "/api/mcp",
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            headers={**MCP_HEADERS, **bearer},
        )
        assert listed.status_code == 200 and "my_courses" in listed.text
        message = await mcp_call(http, "list_friends", token)
        assert "list_friends needs the permission 'friends:read'" in message
        assert "connect it again" in message and "Access tokens" not in message


async def test_a_signed_in_students_tool_refused_on_mcp_is_counted_as_signed_in(site: Site) -> None:
    before = metric_value("scope_denials_total", scope="signed_in", tool=PROBE_TOOL)
    async with httpx.AsyncClient(base_url=site.base, timeout=60) as http:
        message = await mcp_call(http, PROBE_TOOL, None)
    assert "needs a signed-in student" in message
    assert metric_value("scope_denials_total", scope="signed_in", tool=PROBE_TOOL) == before + 1
    # No series with an empty scope: REST and MCP label it alike.
    assert metric_value("scope_denials_total", scope="", tool=PROBE_TOOL) == 0
