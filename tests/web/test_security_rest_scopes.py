"""The REST twins made by ``operation_routes`` check the operation's scope as its tool does
(issue 10, security gap found with point 5): a principal without the scope gets a 403 with the
tool's permission text, one with the scope (or the student's own dashboard session) gets the answer.

The ``shelf`` plugin is a throwaway: one operation on an always-on scope, one on ``shelf:read``
(neither always on nor anonymous). Its routes sit behind a test-only middleware that stands in for
a bearer token on REST (the personal access tokens of a later issue): ``X-Test-Token-Scopes``
makes the request's principal a signed-in app with exactly those scopes.
"""

from __future__ import annotations

from typing import Any

import httpx
from campus_mcp import (
    Operation,
    PluginInfo,
    Principal,
    RouteGroup,
    Scope,
    Tool,
    ToolContext,
    hookimpl,
    operation_routes,
    operation_tools,
)
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import parse_forms
from litestar import Router
from litestar.types import ASGIApp, Receive, Send
from litestar.types import Scope as AsgiScope
from pydantic import BaseModel

TOKEN_HEADER = b"x-test-token-scopes"


class NoArguments(BaseModel):
    pass


class Shelf(BaseModel):
    books: list[str]


async def public_shelf(context: ToolContext, args: NoArguments) -> Shelf:
    return Shelf(books=["Catalog"])


async def private_shelf(context: ToolContext, args: NoArguments) -> Shelf:
    return Shelf(books=[f"{context.principal.username or 'nobody'}'s notes"])


OPERATIONS = (
    Operation(
        name="public_shelf",
        title="Public shelf",
        description="The public shelf. Use it for: 'what is on the public shelf?'",
        scope="shelf:public",
        input_model=NoArguments,
        output_model=Shelf,
        run=public_shelf,
        path="/api/v1/shelf/public",
    ),
    Operation(
        name="private_shelf",
        title="Private shelf",
        description="The student's private shelf. Use it for: 'what is on my shelf?'",
        scope="shelf:read",
        input_model=NoArguments,
        output_model=Shelf,
        run=private_shelf,
        path="/api/v1/shelf/private",
    ),
)


def token_middleware(app: ASGIApp) -> ASGIApp:
    """Test only: a request with ``X-Test-Token-Scopes`` is an app's token with those scopes."""

    async def wrapped(scope: AsgiScope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        if TOKEN_HEADER in headers:
            granted = frozenset(headers[TOKEN_HEADER].decode().split())
            scope["campus_principal"] = Principal(  # type: ignore[typeddict-unknown-key]
                user_id=1, username="student1", client_id="a-test-app", scopes=granted
            )
        await app(scope, receive, send)

    return wrapped


class ShelfPlugin:
    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="shelf", version="1", title="Shelf", description="Test: one scoped operation.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [
            Scope(name="shelf:public", description="The public shelf.", always_on=True),
            Scope(name="shelf:read", description="Read the student's own shelf."),
        ]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return operation_tools(OPERATIONS)

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        router = Router(path="/", route_handlers=operation_routes(OPERATIONS), middleware=[token_middleware])
        return [RouteGroup(handlers=(router,))]


async def shelf_campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(plugins=[], extra_plugins=[("shelf", ShelfPlugin())], demo=True)


async def sign_in(client: httpx.AsyncClient, username: str) -> None:
    page = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    signed_in = await client.post("/login", data=data | {"username": username, "password": "demo"})
    assert signed_in.status_code in (200, 303), signed_in.text


def token(*scopes: str) -> dict[str, str]:
    return {"X-Test-Token-Scopes": " ".join(scopes)}


async def test_a_token_without_the_scope_gets_the_tools_403_and_with_it_the_answer(
    campus_factory: CampusFactory,
) -> None:
    campus = await shelf_campus(campus_factory)
    async with campus.rest() as rest:
        denied = await rest.get("/api/v1/shelf/private", headers=token("other:scope"))
        allowed = await rest.get("/api/v1/shelf/private", headers=token("shelf:read"))
        public = await rest.get("/api/v1/shelf/public", headers=token("other:scope"))
    assert denied.status_code == 403, denied.text
    body: dict[str, Any] = denied.json()
    assert body["error"] == "PermissionMissing"
    # The same words the tool call gets.
    tool_call = await campus.call("private_shelf", principal=campus.principal(["other:scope"], user_id=1))
    assert tool_call.is_error
    assert body["message"] == tool_call.content[0].text  # type: ignore[union-attr]
    assert body["message"].startswith("private_shelf needs the permission 'shelf:read'")
    assert "student1's notes" not in denied.text
    assert (allowed.status_code, allowed.json()) == (200, {"books": ["student1's notes"]})
    assert public.status_code == 200  # an always-on scope is held by every caller


async def test_anonymous_gets_401_and_the_students_own_session_holds_every_scope(
    campus_factory: CampusFactory,
) -> None:
    campus = await shelf_campus(campus_factory)
    async with campus.rest() as rest:
        anonymous = await rest.get("/api/v1/shelf/private")
        # No credentials at all: 401 with its challenge, not 403 (issue 37 point 9).
        assert anonymous.status_code == 401, anonymous.text
        assert anonymous.headers["www-authenticate"].startswith("Bearer"), anonymous.headers
        # No app to reconnect: the anonymous caller is told to sign in.
        assert anonymous.json()["message"].startswith(
            "private_shelf needs the permission 'shelf:read', which only a signed-in student holds. Sign in"
        )
        assert (await rest.get("/api/v1/shelf/public")).status_code == 200
        await sign_in(rest, "student1")
        session = await rest.get("/api/v1/shelf/private")
    assert (session.status_code, session.json()) == (200, {"books": ["student1's notes"]})
