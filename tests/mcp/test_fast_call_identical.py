"""The short way for a read-only tools/call (campus_mcp.mcp.fast_call) answers exactly what the SDK
answers: every case below is sent twice over real HTTP to one served demo campus, once with the
short way off (the SDK's transport and runner: the reference) and once on, and the status, the
content type, the session header and the body must be the same bytes. Both wires. The hot cases
must also really have taken the short way, or the comparison would prove nothing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from campus_catalog.sources.fake_banner import serve_on_loopback
from campus_mcp.mcp import fast_call
from campus_mcp.oauth.store import ClientRecord, OAuthStore
from campus_mcp.testing import CampusHarness
from pydantic import BaseModel

LEGACY, MODERN = "2025-11-25", "2026-07-28"
FULL_TOKEN = "fast-call-test-token-all-scopes"  # test tokens, in a test database
PUBLIC_TOKEN = "fast-call-test-token-public-only"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def origin(demo_campus: CampusHarness) -> AsyncIterator[str]:
    store = OAuthStore(demo_campus.sessions)
    await store.save_client(
        ClientRecord(client_id="fast-call-tests", kind="registered", client_name="Differential", redirect_uris=())
    )
    scopes = demo_campus.registry.scopes
    public = " ".join(name for name, scope in scopes.items() if scope.always_on)
    for token, scope in ((FULL_TOKEN, " ".join(scopes)), (PUBLIC_TOKEN, public)):
        await store.save_tokens(
            access_token=token,
            refresh_token=None,
            client_id="fast-call-tests",
            user_id=1,
            scope=scope,
            resource=demo_campus.settings.mcp_url,
            family_id=f"family-{token}",
        )
    async with serve_on_loopback(demo_campus.app) as served:
        yield served


def request(
    wire: str, name: Any, arguments: Any = None, *, request_id: Any = 1, meta: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """One tools/call as a client of ``wire`` sends it: the body and its headers."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    headers["MCP-Protocol-Version"] = wire
    if wire == MODERN:
        params["_meta"] = {**ENVELOPE, **(meta or {})}
        headers["Mcp-Method"] = "tools/call"
        if isinstance(name, str):
            headers["Mcp-Name"] = name
    elif meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}, headers


async def both_ways(
    demo_campus: CampusHarness, http: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]
) -> tuple[httpx.Response, httpx.Response]:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    endpoint = demo_campus.deployment.endpoint
    assert endpoint is not None
    answers = []
    was = endpoint.fast_reads
    for fast in (False, True):
        endpoint.fast_reads = fast
        try:
            answers.append(await http.post(url, content=content, headers=headers))
        finally:
            endpoint.fast_reads = was
    return answers[0], answers[1]


def same(reference: httpx.Response, fast: httpx.Response) -> None:
    assert fast.status_code == reference.status_code
    assert fast.headers.get("content-type") == reference.headers.get("content-type")
    assert fast.headers.get("mcp-session-id") == reference.headers.get("mcp-session-id") is None
    assert fast.content == reference.content


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each request took the short way (the real method, its answers recorded)."""
    seen: list[bool] = []
    real = fast_call.FastReads.serve

    async def recorded(self: fast_call.FastReads, *args: Any) -> bool:
        answered = await real(self, *args)
        seen.append(answered)
        return answered

    monkeypatch.setattr(fast_call.FastReads, "serve", recorded)
    return seen


@pytest.fixture
def spliced(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each answer the short way wrote had its object and text spliced in (FastReads._spliced)."""
    seen: list[bool] = []
    real = fast_call.FastReads._spliced

    def recorded(self: fast_call.FastReads, *args: Any) -> bytes | None:
        body = real(self, *args)
        seen.append(body is not None)
        return body

    monkeypatch.setattr(fast_call.FastReads, "_spliced", recorded)
    return seen


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
async def test_every_read_tool_example_is_answered_the_same(
    demo_campus: CampusHarness, origin: str, wire: str, taken: list[bool], spliced: list[bool]
) -> None:
    registry = demo_campus.registry
    examples = [e for e in registry.tool_examples if e.data == "demo" and not registry.tools[e.tool].writes]
    assert {e.tool for e in examples} >= {"search_sections", "get_section", "list_terms"}
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        for index, example in enumerate(examples):
            body, headers = request(wire, example.tool, dict(example.arguments), request_id=index)
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
            assert reference.status_code == 200, (example.tool, reference.text[:300])
            same(reference, fast)
            # The family endpoint has its own short way.
            plugin = registry.tools[example.tool].plugin
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp/{plugin}", body, headers)
            same(reference, fast)
    # Each case ran twice with the short way on (flat and family), and each was taken, its answer spliced.
    assert taken == [True] * (2 * len(examples))
    assert spliced == [True] * (2 * len(examples))


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("bad arguments", {"arguments": {"limit": "lots"}}),
    ("an argument that is no field", {"arguments": {"subject": "COMP", "colour": "blue"}}),
    ("arguments not an object", {"arguments": ["COMP"]}),
    ("unknown tool", {"name": "no_such_tool"}),
    ("a name that is a number", {"name": 7}),
    ("a write tool", {"name": "WRITE", "arguments": {}}),
    ("a string id", {"request_id": "abc"}),
    ("a large number id", {"request_id": 2**53}),
    ("a null id", {"request_id": None}),
    ("a true id", {"request_id": True}),
    ("a zero id", {"request_id": 0}),
    ("a negative id", {"request_id": -7}),
    ("an id past 64 bits", {"request_id": 2**64 + 1}),
    ("an empty string id", {"request_id": ""}),
    ("a unicode id", {"request_id": "id \u00e9 \u2615 \U0001f600 \x7f"}),
    ("a float id", {"request_id": 1.5}),
    ("a whole float id", {"request_id": 1.0}),
    ("an object id", {"request_id": {}}),
    ("a list id", {"request_id": [1]}),
    ("an extra _meta key", {"meta": {"io.modelcontextprotocol/other": {"a": 1}}}),
    ("a malformed clientInfo", {"meta": {"io.modelcontextprotocol/clientInfo": "differential"}}),
    ("a null clientCapabilities", {"meta": {"io.modelcontextprotocol/clientCapabilities": None}}),
    ("an envelope version not the header's", {"meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}),
    ("a progress token", {"meta": {"progressToken": "p1"}}),
    ("an extra member", {"extra": {"colour": "blue"}}),
    ("a wrong jsonrpc", {"jsonrpc": "1.0"}),
]


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
@pytest.mark.parametrize("case", [case for case, _ in HOSTILE], ids=[case for case, _ in HOSTILE])
async def test_a_hostile_request_is_answered_the_same(
    demo_campus: CampusHarness, origin: str, wire: str, case: str
) -> None:
    change = dict(HOSTILE)[case]
    name = change.get("name", "search_sections")
    if name == "WRITE":
        name = next(n for n, tool in demo_campus.registry.tools.items() if tool.writes)
    body, headers = request(
        wire,
        name,
        change.get("arguments", {"subject": "COMP", "limit": 2}),
        request_id=change.get("request_id", 1),
        meta=change.get("meta"),
    )
    if "extra" in change:
        body["extra"] = change["extra"]
    if "jsonrpc" in change:
        body["jsonrpc"] = change["jsonrpc"]
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
    same(reference, fast)


HEADER_CASES: list[tuple[str, dict[str, str | None]]] = [
    ("a wrong protocol version", {"MCP-Protocol-Version": "2024-01-01"}),
    ("no protocol version", {"MCP-Protocol-Version": None}),
    ("an older protocol version", {"MCP-Protocol-Version": "2025-03-26"}),
    ("a wrong Mcp-Name", {"Mcp-Name": "get_section"}),
    ("a wrong Mcp-Method", {"Mcp-Method": "tools/list"}),
    ("a foreign Origin", {"Origin": "https://evil.example"}),
    ("a foreign Host", {"Host": "evil.example"}),
    ("Accept without JSON", {"Accept": "text/event-stream"}),
    ("no Accept", {"Accept": None}),
    ("a wrong Content-Type", {"Content-Type": "text/plain"}),
    ("a session id", {"Mcp-Session-Id": "abc"}),
    ("an Mcp-Param header", {"Mcp-Param-Subject": "COMP"}),
]


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
@pytest.mark.parametrize("case", [case for case, _ in HEADER_CASES], ids=[case for case, _ in HEADER_CASES])
async def test_a_request_with_odd_headers_is_answered_the_same(
    demo_campus: CampusHarness, origin: str, wire: str, case: str
) -> None:
    body, headers = request(wire, "search_sections", {"subject": "COMP", "limit": 2})
    for header, value in dict(HEADER_CASES)[case].items():
        headers.pop(header, None)
        if value is not None:
            headers[header] = value
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
    same(reference, fast)


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
async def test_a_missing_scope_anonymous_and_bad_json_are_answered_the_same(
    demo_campus: CampusHarness, origin: str, wire: str
) -> None:
    student_tools = [
        name
        for name, tool in demo_campus.registry.tools.items()
        if not tool.writes and not demo_campus.registry.scopes[tool.scope].always_on
    ]
    assert student_tools
    body, headers = request(wire, student_tools[0], {})
    for token in (PUBLIC_TOKEN, None):
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(headers=auth) as http:
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
            same(reference, fast)
            public, public_headers = request(wire, "list_terms", {})
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", public, public_headers)
            assert reference.status_code == 200
            same(reference, fast)
            for broken in (b"{not json", b"[]", json.dumps([public]).encode()):
                reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", broken, public_headers)
                same(reference, fast)


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
async def test_json_the_parsers_could_read_apart_is_answered_the_same(
    demo_campus: CampusHarness, origin: str, wire: str
) -> None:
    """NaN and Infinity (Python's json and pydantic's parser both accept them), a key given twice
    (the last one wins, or not), a number past 64 bits: the short way must read them as the SDK does."""
    body, headers = request(wire, "search_sections", {"subject": "COMP", "limit": 2})
    text = json.dumps(body)
    raw = [
        text.replace('"limit": 2', '"credits": NaN, "limit": 2'),
        text.replace('"limit": 2', '"credits": Infinity, "limit": 2'),
        text.replace('"name": "search_sections"', '"name": "get_section", "name": "search_sections"'),
        text.replace('"limit": 2', '"limit": 2, "limit": 3'),
        text.replace('"limit": 2', '"limit": 123456789012345678901234567890'),
    ]
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        for content in raw:
            assert content != text
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", content.encode(), headers)
            same(reference, fast)


def without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


# The 2026-07-28 envelope as clients may really send it, each with whether the short way answers it.
ENVELOPES: list[tuple[str, Any, bool]] = [
    ("no clientInfo (an SDK client without one)", without(ENVELOPE, "io.modelcontextprotocol/clientInfo"), True),
    ("the whole envelope", ENVELOPE, True),
    ("no _meta", None, False),
    ("a _meta that is a list", [ENVELOPE], False),
    ("an empty _meta", {}, False),
    ("no clientCapabilities", without(ENVELOPE, "io.modelcontextprotocol/clientCapabilities"), False),
    ("no protocolVersion", without(ENVELOPE, "io.modelcontextprotocol/protocolVersion"), False),
]


@pytest.mark.parametrize("case", [case for case, _, _ in ENVELOPES], ids=[case for case, _, _ in ENVELOPES])
async def test_a_modern_envelope_is_answered_the_same(
    demo_campus: CampusHarness, origin: str, case: str, spliced: list[bool]
) -> None:
    meta, hot = next((meta, hot) for name, meta, hot in ENVELOPES if name == case)
    body, headers = request(MODERN, "search_sections", {"subject": "COMP", "limit": 3})
    body["params"] = without(body["params"], "_meta") if meta is None else {**body["params"], "_meta": meta}
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
    same(reference, fast)
    assert spliced == ([True] if hot else [])
    if not hot:
        assert reference.status_code != 200 or "error" in reference.json()


async def test_an_extra_params_member_is_answered_the_same(demo_campus: CampusHarness, origin: str) -> None:
    for wire in (LEGACY, MODERN):
        body, headers = request(wire, "search_sections", {"subject": "COMP", "limit": 3})
        body["params"]["cursor"] = "abc"
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
        same(reference, fast)


# Every character the two JSON writers could write apart, in every answer (the advisory's message).
UNICODE_ADVISORY = (
    'Ça «marche» — caf\u00e9 \u2615 \U0001f600 \u2028 DEL \x7f tab \t quote " backslash \\ '
    "an exponent 1e-07 and 0.00001 in words, Infinity and NaN too: ask {campus}'s advisor."
)


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
async def test_a_large_answer_with_any_unicode_is_answered_the_same(
    demo_campus: CampusHarness, origin: str, wire: str, spliced: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 100-section page whose advisory holds non-ASCII, astral, DEL, control and escaped characters
    and words that look like floats: the splice writes them as each wire's serializer does."""
    settings = demo_campus.registry.settings
    monkeypatch.setattr(settings, "advisor_message", UNICODE_ADVISORY)
    body, headers = request(wire, "search_sections", {"limit": 100})
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
    assert reference.status_code == 200
    answer = reference.json()["result"]
    assert answer["structuredContent"]["advisory"]["message"].startswith("Ça «marche»")
    assert len(answer["structuredContent"]["sections"]) == 100
    same(reference, fast)
    assert spliced == [True]


# Values a JSON-mode answer may hold, and the ones where pydantic's writer and json.dumps part.
TRICKY_VALUES: list[Any] = [
    {"a": None, "b": [True, False, None, 0, -1, 2**64 + 1, 10**40], "": {}, "c": []},
    [0.0, -0.0, 0.1, 2.5, 100.0, 1e-4, 1e15, 9999999999999998.0],
    # Each alone, so that no other value sends the whole to json.dumps.
    [9.999999999999999e-05],
    {"rating": -1.2719246934527984e-05},
    [1e-07],
    [5e-324],
    [1e16],
    [1.2e17],
    [1.8e308],
    [0.00030000000000000003, 123456.789, -0.00012],
    'plain text with " quotes \\ backslashes / slashes \b\f\n\r\t and \x00\x01\x1f controls',
    "caf\u00e9 \u2615 \U0001f600 \u2028 \x7f",
    {"k\u00e9y": "v", "DEL\x7f": 1, "1e5": "2e-3", "0.00001": "Infinity NaN"},
    [float("inf")],
    [float("nan")],
    {"x": -float("inf")},
]


@pytest.mark.parametrize("value", TRICKY_VALUES, ids=range(len(TRICKY_VALUES)))
def test_python_json_writes_what_json_dumps_writes(value: Any) -> None:
    try:
        expected: bytes | None = json.dumps(value, separators=(",", ":"), allow_nan=False).encode()
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(ValueError):
            fast_call.python_json(value)
    else:
        assert fast_call.python_json(value) == expected
    if isinstance(value, str):
        assert fast_call.python_json_string(value) == json.dumps(value).encode()


class Rated(BaseModel):
    """An answer a plugin's model could give: a float that may not be finite."""

    name: str
    score: float


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
@pytest.mark.parametrize(
    ("score", "name", "reused"),
    [
        (float("nan"), "plain", False),
        (float("-inf"), "plain", False),
        (0.5, "NaN and Infinity, in words only", True),
    ],
    ids=["nan", "minus infinity", "the words in a string"],
)
async def test_an_answer_with_a_float_json_cannot_write_is_answered_the_same(
    demo_campus: CampusHarness,
    origin: str,
    wire: str,
    score: float,
    name: str,
    reused: bool,
    spliced: list[bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reply reuses an answer's own JSON for its object only when infinity and NaN are nowhere
    in it (mcp_server.written_json): an answer with a non-finite float goes the SDK's way (which
    writes it as null); the words in a string are only words, and the splice writes them."""

    async def rated(_context: Any, _args: Any) -> Rated:
        return Rated(name=name, score=score)

    endpoint = demo_campus.deployment.endpoint
    assert endpoint is not None
    tool = dataclasses.replace(demo_campus.registry.tools["list_terms"], handler=rated)
    monkeypatch.setitem(demo_campus.registry.tools, "list_terms", tool)
    for server in endpoint.servers.values():
        if "list_terms" in server.tools:
            monkeypatch.setitem(server.tools, "list_terms", tool)
    body, headers = request(wire, "list_terms", {})
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
    same(reference, fast)
    assert spliced == [reused]
    answer = reference.json()["result"]
    structured = answer["structuredContent"]
    # The SDK writes a float JSON cannot say as null, on either wire; the text says the same.
    assert structured["name"] == name and structured["score"] == (score if reused else None)
    assert json.loads(answer["content"][0]["text"])["score"] == structured["score"]


@pytest.mark.parametrize("wire", [LEGACY, MODERN])
async def test_a_kept_reply_frame_serves_every_id_and_answer_of_its_shape(
    demo_campus: CampusHarness, origin: str, wire: str, spliced: list[bool]
) -> None:
    """The reply around an answer is made the SDK's way once per shape (FastReads._frame) and kept:
    later calls of that shape, with other ids and other answers, still get the SDK's bytes."""
    endpoint = demo_campus.deployment.endpoint
    assert endpoint is not None
    frames = endpoint.fast["/api/mcp"]._frames
    frames.clear()
    cases = [(1, "COMP"), ("an id \u00e9 \U0001f600", "MATH"), (2**64 + 1, "COMP"), (-3, "BIOL"), ("", "COMP")]
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FULL_TOKEN}"}) as http:
        for request_id, subject in cases:
            body, headers = request(wire, "search_sections", {"subject": subject, "limit": 2}, request_id=request_id)
            reference, fast = await both_ways(demo_campus, http, f"{origin}/api/mcp", body, headers)
            assert reference.json()["id"] == request_id
            same(reference, fast)
    assert spliced == [True] * len(cases)
    # One shape per distinct set of page links (the subject is in them), not one per call.
    assert 0 < len(frames) <= len({subject for _id, subject in cases}), list(frames)
