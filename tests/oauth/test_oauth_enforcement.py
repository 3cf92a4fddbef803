"""Scope enforcement with real tokens: the permission error, step-up for allow-listed clients,
the anonymous toolset, and who may sign in (argon2 local accounts, demo students in demo mode only)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import pytest
from campus_mcp.base import metrics
from campus_mcp.oauth.accounts import Student, create_local_student
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import (
    BrowserStudent,
    MemoryStorage,
    ScopeProbe,
    free_port,
    parse_forms,
    provider_for,
    serve_on_loopback,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import select


async def _serve(campus_factory: CampusFactory, **overrides: Any) -> tuple[Any, int]:
    port = free_port()
    values: dict[str, Any] = {
        "plugins": [],
        "extra_plugins": [("probe", ScopeProbe())],
        "demo": True,
        "anonymous_access": False,
        "public_url": f"http://127.0.0.1:{port}",
    }
    values.update(overrides)
    return await campus_factory(**values), port


@pytest.fixture
async def step_up_server(campus_factory: CampusFactory) -> AsyncIterator[str]:
    campus, port = await _serve(campus_factory, step_up_clients=["Probe Assistant"])
    async with serve_on_loopback(campus.app, port) as base:
        yield base


async def test_step_up_for_an_allow_listed_client(step_up_server: str) -> None:
    mcp_url = f"{step_up_server}/api/mcp"
    student = BrowserStudent("student3", "demo", choose={"probe:read"})
    storage = MemoryStorage()
    async with (
        httpx2.AsyncClient(auth=provider_for(mcp_url, student, storage), timeout=30) as http,
        Client(streamable_http_client(mcp_url, http_client=http)) as client,
    ):
        read = await client.call_tool("read_probe", {})
        assert read.structured_content["scopes"] == ["probe:public", "probe:read"]
        # Now the token lacks probe:write: the server answers 403 insufficient_scope, the SDK
        # signs in again for the wider scope, and the student sees a page with the boxes checked.
        student.choose = None
        written = await client.call_tool("write_probe", {})
    assert not written.is_error
    assert written.structured_content["scopes"] == ["probe:public", "probe:read", "probe:write"]
    assert student.last_consent is not None
    assert student.last_consent.boxes == {"probe:read": True, "probe:write": True}


async def test_a_client_not_on_the_list_gets_the_permission_error(campus_factory: CampusFactory) -> None:
    campus, port = await _serve(campus_factory)
    before = metrics.value("scope_denials_total", tool="write_probe")
    async with serve_on_loopback(campus.app, port) as base:
        mcp_url = f"{base}/api/mcp"
        student = BrowserStudent("student4", "demo", choose=set())
        async with (
            httpx2.AsyncClient(auth=provider_for(mcp_url, student, MemoryStorage()), timeout=30) as http,
            Client(streamable_http_client(mcp_url, http_client=http)) as client,
        ):
            tools = await client.list_tools()
            write_tool = next(t for t in tools.tools if t.name == "write_probe")
            assert "Needs the permission 'probe:write'" in (write_tool.description or "")
            denied = await client.call_tool("write_probe", {})
            public = await client.call_tool("public_probe", {})
    assert denied.is_error
    text = denied.content[0].text
    assert "probe:write" in text and "connect it again" in text
    links = [item for item in denied.content if item.type == "resource_link"]
    assert links and str(links[0].uri).endswith("/dashboard/settings#connected-apps")
    assert public.structured_content["scopes"] == ["probe:public"]
    assert metrics.value("scope_denials_total", tool="write_probe") == before + 1


async def test_anonymous_requests_get_the_public_toolset(campus_factory: CampusFactory) -> None:
    campus, port = await _serve(campus_factory, anonymous_access=True)
    async with serve_on_loopback(campus.app, port) as base, Client(f"{base}/api/mcp") as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["public_probe"]


async def _login(base: str, username: str, password: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base, timeout=30) as browser:
        page = await browser.get("/login")
        data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
        return await browser.post("/login", data=data | {"username": username, "password": password})


async def test_demo_students_are_refused_outside_demo_mode(campus_factory: CampusFactory) -> None:
    campus, port = await _serve(campus_factory, demo=False, demo_mode=False)
    async with campus.sessions() as session, session.begin():
        session.add(Student(username="student1", display_name="Demo", is_demo=True))
        local = await create_local_student(session, "ada", "correct horse battery staple")
        stored_hash = local.password_hash
    assert stored_hash is not None and stored_hash.startswith("$argon2id$")
    async with serve_on_loopback(campus.app, port) as base:
        assert (await _login(base, "student1", "demo")).status_code == 401
        assert (await _login(base, "ada", "wrong")).status_code == 401
        signed_in = await _login(base, "ada", "correct horse battery staple")
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/dashboard"


async def test_demo_students_sign_in_with_the_demo_password_setting(campus_factory: CampusFactory) -> None:
    campus, port = await _serve(campus_factory, demo_password="open sesame", demo_students=3)
    async with campus.sessions() as session:
        names = list((await session.execute(select(Student.username).order_by(Student.id))).scalars())
    assert names == ["student1", "student2", "student3"]
    async with serve_on_loopback(campus.app, port) as base:
        assert (await _login(base, "student2", "demo")).status_code == 401
        assert (await _login(base, "student2", "open sesame")).status_code == 303


async def test_harness_principal_of_a_demo_student(campus_factory: CampusFactory) -> None:
    campus, _ = await _serve(campus_factory)
    principal = await campus.student_principal("student1", ["probe:read"])
    allowed = await campus.call("read_probe", principal=principal)
    assert allowed.structured_content == {"username": "student1", "scopes": ["probe:read"], "sdk_subject": None}
    denied = await campus.call("write_probe", principal=principal)
    assert denied.is_error and "probe:write" in denied.content[0].text


async def test_a_local_account_after_the_demo_students_gets_the_next_id(campus_factory: CampusFactory) -> None:
    # PostgreSQL's sequence does not move for explicit ids; the demo loader moves it.
    campus, _ = await _serve(campus_factory, demo_students=4)
    async with campus.sessions() as session, session.begin():
        student = await create_local_student(session, "newcomer", "a long passphrase")
    assert student.id == 5
