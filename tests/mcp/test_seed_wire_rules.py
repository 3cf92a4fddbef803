"""Seed 000's own rules for the wire and the instructions (issue 24, point 15), over real HTTP.

A demo campus is served by uvicorn on loopback and every request is a raw JSON-RPC POST, so the
test sends what the SDK client would refuse to build (a ``context`` that is a string, an
``inputResponses`` that is one) and sees exactly what a client sees. Each test quotes the seed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from campus_mcp.mcp.instructions import MAX_INSTRUCTIONS_LENGTH
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import free_port, serve_on_loopback

MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
ACCEPT = "application/json, text/event-stream"
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
Served = tuple[CampusHarness, httpx.AsyncClient]


@pytest.fixture
async def served(campus_factory: CampusFactory) -> AsyncIterator[Served]:
    port = free_port()
    campus = await campus_factory(demo=True, anonymous_access=True, public_url=f"http://127.0.0.1:{port}")
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        yield campus, http


def _meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "seed-test", "version": "1"},
    }


async def _call(
    http: httpx.AsyncClient, version: str, method: str, params: dict[str, Any], token: str | None = None
) -> dict[str, Any]:
    """One request on the wire of ``version``; the JSON-RPC answer (result or error)."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": version}
    if version == MODERN:
        params = {**params, "_meta": {**_meta(), **params.get("_meta", {})}}
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    answer = await http.post(
        "/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers
    )
    assert answer.status_code in (200, 400), answer.text[:400]
    body: dict[str, Any] = answer.json()
    return body


async def test_the_instructions_give_the_time_ticket_the_rac_and_what_a_refresh_time_means(served: Served) -> None:
    """Seed 000: "The server instructions have only the time ticket and the RAC"; "The time is when
    a full run finished, not when one course changed ... one fresh course says nothing about the
    rest. ... The server instructions say the same." Triggers first, within 2,048 characters."""
    _, http = served
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "seed-test", "version": "1"}}
    answer = await http.post(
        "/api/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        headers={"Accept": ACCEPT, "Content-Type": "application/json"},
    )
    instructions = answer.json()["result"]["instructions"]
    assert len(instructions) <= MAX_INSTRUCTIONS_LENGTH
    assert instructions.startswith("Use this server for Wentworth Institute of Technology (WIT) courses")
    # Seed 000: "The student finds it in myWentworth under Prepare for Registration" (the demo campus's rule).
    assert "registers at the time on their time ticket (myWentworth, Prepare for Registration)" in instructions
    assert "first-year students, sophomores and students on probation need a RAC from their primary advisor" in (
        instructions
    )
    assert "A refresh time there is when a full run ended, not one course" in instructions
    assert "one fresh course says nothing of the rest" in instructions
    # The rules that were there stay: the override rule and the confirmation rule.
    assert "Overrides (from the dean's office of the school that offers the course) are never certain" in instructions
    assert "write tools ask the student to confirm" in instructions


@pytest.mark.parametrize("version", [*LEGACY_VERSIONS, MODERN])
async def test_every_list_result_carries_the_cache_hints_on_every_wire(served: Served, version: str) -> None:
    """Seed 000 "Cache hints": ``ttlMs`` 300,000 and ``cacheScope`` public; "A client on a protocol
    version before 2026-07-28 also gets the two fields in the list results." """
    _, http = served
    for method in LISTS:
        result = (await _call(http, version, method, {}))["result"]
        assert (result.get("ttlMs"), result.get("cacheScope")) == (300_000, "public"), (version, method)
    # Never on a call's result (the seed: not on tools/call, prompts/get or completion/complete).
    called = (await _call(http, version, "tools/call", {"name": "list_terms", "arguments": {}}))["result"]
    assert "ttlMs" not in called and "cacheScope" not in called


def _complete(context: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "ref": {"type": "ref/prompt", "name": "find_class_for_free_time"},
        "argument": {"name": "subject", "value": "C"},
    }
    if context is not ...:
        params["context"] = context
    return params


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
@pytest.mark.parametrize("context", ["202710", ["202710"], 7, {"arguments": "202710"}, {"arguments": ["term"]}])
async def test_a_completion_context_that_is_not_an_object_is_no_context(
    served: Served, version: str, context: Any
) -> None:
    """Seed 000 "Completions": "A ``context`` or ``context.arguments`` that is not an object gives no
    context, not an error." """
    _, http = served
    without = (await _call(http, version, "completion/complete", _complete(...)))["result"]["completion"]
    assert without["values"], "the demo campus has C subjects"
    answer = await _call(http, version, "completion/complete", _complete(context))
    assert "error" not in answer, answer
    assert answer["result"]["completion"]["values"] == without["values"]
    # A well-formed context still narrows (so the test above means something): a term's own subjects.
    one_term = {"arguments": {"term": "202710", "other": 5}}
    narrowed = await _call(http, version, "completion/complete", _complete(one_term))
    assert "error" not in narrowed, narrowed


@pytest.mark.parametrize("answer", ["accept", ["accept"], {"confirm": "accept"}, {"confirm": True}])
async def test_an_input_response_that_is_not_an_object_is_a_cancel(served: Served, answer: Any) -> None:
    """Seed 000 "Confirmation": "An answer or a state that is not a JSON object counts as a cancel
    or as no state. It does not cause an error." The retry answers ``not_changed`` cancelled and
    nothing changes."""
    campus, http = served
    student = await campus.student_principal("student1")
    assert student.user_id is not None
    token = await PersonalTokens(campus.sessions, campus.settings).create(
        student.user_id, name="seed rules test", scope="settings:read notifications:write", days=7
    )
    asking = {"_meta": _meta({"elicitation": {"form": {}}})}
    call = {"name": "set_notifications", "arguments": {"paused": True, "hours": 2}}
    first = (await _call(http, MODERN, "tools/call", {**call, **asking}, token))["result"]
    assert first["resultType"] == "input_required", first
    retry = {**call, **asking, "requestState": first["requestState"], "inputResponses": answer}
    reply = await _call(http, MODERN, "tools/call", retry, token)
    assert "error" not in reply, reply
    result = reply["result"]
    assert not result.get("isError"), result
    assert result["structuredContent"]["result"] == "unchanged"
    assert result["structuredContent"]["not_changed"]["reason"] == "cancelled"
    assert result["structuredContent"]["paused"] is False
