"""Hostile GraphQL queries, sent for real: a fragment fan-out that once froze the whole server,
costs that hid behind a variable's default or a negative ``limit``, an operation name that is
unknown, missing or not a string, and one with a newline meant to forge a line of the log.

The fan-out goes to a real ``campus-mcp serve`` on loopback (a subprocess, so a frozen server can
be killed) through both doors, ``POST /api/v1/graphql`` and the ``catalog_graphql`` tool, while
``/healthz`` is timed: the server must keep answering it within 250 ms (``HEALTHZ_BUDGET_S``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from campus_catalog.graphql import MAX_COST, query_cost
from campus_catalog.graphql_limits import MAX_SELECTIONS, MAX_TOKENS
from campus_mcp import escaped
from campus_mcp.testing import CampusHarness, ServedCampus, serve
from graphql import parse
from mcp import Client

# What the server must keep: answering /healthz while it refuses. The fan-out once froze it for
# seconds; on CI's two cores, shared by both test passes, conformance and the Inspector, an
# answer beside the refusal took 101 and 150 ms in two fresh-clone runs (2026-12-02) against
# 3-17 ms before and after it. The budget tells a frozen server from a busy machine.
HEALTHZ_BUDGET_S = 0.25
REFUSAL_DEADLINE_S = 5.0


def fan_out(levels: int, width: int = 10) -> str:
    """``levels`` fragments, each spreading the one below ``width`` times: width**levels leaves."""
    fragments = ["fragment F0 on Query { terms { terms { uid } } }"]
    for level in range(1, levels + 1):
        spreads = " ".join([f"...F{level - 1}"] * width)
        fragments.append(f"fragment F{level} on Query {{ {spreads} }}")
    return f"{{ ...F{levels} }}\n" + "\n".join(fragments)


# ----------------------------------------------------------------------------- a real server


@pytest.fixture(scope="module")
def served(catalog_campus: CampusHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedCampus]:
    """``campus-mcp serve`` on the small catalog's database, anonymous access on."""
    folder = tmp_path_factory.mktemp("graphql-serve")
    env = {
        "CAMPUS_MCP_DATABASE_URL": catalog_campus.settings.database_url,
        "CAMPUS_MCP_PLUGINS": "catalog",
        "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key",
        "CAMPUS_MCP_CONFIG": str(folder / "absent.toml"),
    }
    # A server frozen by a query does not stop on SIGINT: it is killed after 10 s.
    with serve(env, log_path=folder / "serve.log", args=["--no-prepare"], stop_timeout_s=10) as campus:
        _wait_for_warm_up(campus)
        yield campus


# Logged by the catalog when its start-up work in the background (vectors, the model) is done.
WARM_LINE = "search by meaning is ready"
WARM_UP_DEADLINE_S = 60.0


def _wait_for_warm_up(campus: ServedCampus) -> None:
    """Until the server's own start-up work is over: /healthz is then timed against the refusal
    alone, not against the model loading in a thread beside it on a busy CI machine."""
    deadline = time.monotonic() + WARM_UP_DEADLINE_S
    while WARM_LINE not in campus.log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            pytest.fail(f"the served campus did not finish its warm-up in {WARM_UP_DEADLINE_S:.0f} s; see {campus.log}")
        time.sleep(0.05)


async def _healthz_while(base: str, task: asyncio.Task[Any]) -> list[float]:
    """Time ``/healthz`` until ``task`` ends (at least three times): the seconds of each answer."""
    timings: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=REFUSAL_DEADLINE_S) as client:
        await client.get("/healthz")  # the connection is made before the clock starts
        while not task.done() or len(timings) < 3:
            started = time.perf_counter()
            try:
                response = await client.get("/healthz")
            except httpx.TimeoutException:
                timings.append(REFUSAL_DEADLINE_S)
                break
            timings.append(time.perf_counter() - started)
            assert response.status_code == 200
            await asyncio.sleep(0.005)
    return timings


@pytest.mark.parametrize("levels", [8, 10, 14])
async def test_a_fragment_fan_out_is_refused_at_once_over_rest(served: ServedCampus, levels: int) -> None:
    async def send() -> httpx.Response:
        async with httpx.AsyncClient(base_url=served.base, timeout=REFUSAL_DEADLINE_S) as client:
            return await client.post("/api/v1/graphql", json={"query": fan_out(levels)})

    started = time.perf_counter()
    task = asyncio.create_task(send())
    timings = await _healthz_while(served.base, task)
    response = await asyncio.wait_for(task, REFUSAL_DEADLINE_S)
    assert time.perf_counter() - started < REFUSAL_DEADLINE_S
    assert max(timings) < HEALTHZ_BUDGET_S, timings
    assert response.status_code == 400, response.text
    message = response.json()["message"]
    assert "size limit" in message and f"{MAX_SELECTIONS:,}" in message and "fragment" in message


async def test_a_fragment_fan_out_is_refused_at_once_through_the_tool(served: ServedCampus) -> None:
    async with Client(f"{served.base}/api/mcp") as client:
        started = time.perf_counter()
        task = asyncio.create_task(client.call_tool("catalog_graphql", {"query": fan_out(10)}))
        timings = await _healthz_while(served.base, task)
        result = await asyncio.wait_for(task, REFUSAL_DEADLINE_S)
    assert time.perf_counter() - started < REFUSAL_DEADLINE_S
    assert max(timings) < HEALTHZ_BUDGET_S, timings
    assert result.is_error
    assert "size limit" in result.content[0].text  # type: ignore[union-attr]


async def test_too_many_tokens_are_refused_before_parsing(served: ServedCampus) -> None:
    # Well under the character limit, but every character a token of its own.
    query = "{ terms { terms { " + "uid " * (MAX_TOKENS + 10) + "} } }"
    async with httpx.AsyncClient(base_url=served.base, timeout=REFUSAL_DEADLINE_S) as client:
        response = await client.post("/api/v1/graphql", json={"query": query})
    assert response.status_code == 400
    assert "token" in response.json()["message"] and f"{MAX_TOKENS:,}" in response.json()["message"]


def test_each_fragment_is_costed_once() -> None:
    document = parse(fan_out(7))
    started = time.perf_counter()
    cost = query_cost(document, {})
    assert time.perf_counter() - started < 1.0
    assert cost == 3 * 10**7  # terms, its terms list and uid, at every one of the 10**7 leaves


# ----------------------------------------------------------------------------- costs that hid


def _text(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


async def _tool(campus: CampusHarness, query: str, **extra: Any) -> Any:
    return await campus.call("catalog_graphql", {"query": query, **extra}, scopes=["catalog"])


DEFAULTED = """query Plan($l: Int = 100) {
  sections(limit: $l) { sections { crn course { code offered_sections(limit: $l) { sections { crn } } } } }
}"""


def test_cost_uses_the_variable_default_and_the_given_value() -> None:
    document = parse(DEFAULTED)
    assert query_cost(document, {}) == 1 + 100 * (1 + 1 + 1 + 1 + 1 + 100 * 2)
    assert query_cost(document, {"l": 2}) == 1 + 2 * (1 + 1 + 1 + 1 + 1 + 2 * 2)
    # An explicit null is no value: the field's own default page size.
    assert query_cost(parse("query($l: Int = 100) { sections(limit: $l) { total } }"), {"l": None}) == 1 + 25


async def test_a_variable_default_cannot_hide_the_cost(catalog_campus: CampusHarness) -> None:
    result = await _tool(catalog_campus, DEFAULTED)
    message = _text(result)
    assert result.is_error and "cost limit" in message and str(MAX_COST) in message

    result = await _tool(catalog_campus, DEFAULTED, variables={"l": 2})
    assert not result.is_error, _text(result)
    assert len(result.structured_content["data"]["sections"]["sections"]) <= 2


async def test_a_limit_below_one_is_refused_with_the_allowed_range(catalog_campus: CampusHarness) -> None:
    # A negative page made the cost negative, so it paid for the costly field beside it.
    costly = (
        "{ a: sections(limit: -20000) { total }"
        " b: sections(limit: 100) { sections { crn course { code offered_sections(limit: 100) { sections { crn } } } } } }"
    )
    for query, variables in (
        (costly, None),
        ("{ sections(limit: 0) { total } }", None),
        ("query($n: Int) { courses(limit: $n) { total } }", {"n": -3}),
        ("query($n: Int = -3) { courses(limit: $n) { total } }", None),
    ):
        extra = {"variables": variables} if variables else {}
        result = await _tool(catalog_campus, query, **extra)
        message = _text(result)
        assert result.is_error, result.structured_content
        assert "`limit`" in message and "between 1 and 100" in message, message


# ----------------------------------------------------------------------------- operationName

TWO_NAMED = "query Terms { terms { terms { uid } } } query Subjects { subjects { subjects { code } } }"


async def test_an_unknown_operation_name_names_the_operations(catalog_campus: CampusHarness) -> None:
    result = await _tool(catalog_campus, TWO_NAMED, operationName="Courses")
    message = _text(result)
    assert result.is_error
    assert "Courses" in message and "Terms" in message and "Subjects" in message

    result = await _tool(catalog_campus, TWO_NAMED, operationName="Subjects")
    assert not result.is_error, _text(result)
    assert set(result.structured_content["data"]) == {"subjects"}


async def test_several_operations_need_an_operation_name(catalog_campus: CampusHarness) -> None:
    for query in (TWO_NAMED, "{ terms { total } } { subjects { total } }"):
        result = await _tool(catalog_campus, query)
        assert result.is_error, result.structured_content
        assert "operationName" in _text(result)


async def test_operation_names_over_rest_answer_400_never_500(served: ServedCampus) -> None:
    bodies: list[dict[str, Any]] = [
        {"query": TWO_NAMED, "operationName": "Courses"},
        {"query": TWO_NAMED},
        {"query": "{ terms { total } } { subjects { total } }"},
        {"query": TWO_NAMED, "operationName": 5},
        {"query": TWO_NAMED, "operationName": ["Terms"]},
    ]
    async with httpx.AsyncClient(base_url=served.base, timeout=REFUSAL_DEADLINE_S) as client:
        for body in bodies:
            response = await client.post("/api/v1/graphql", json=body)
            assert response.status_code == 400, (body, response.text)
            assert "operationName" in response.text or "operation_name" in response.text, response.text


async def test_a_non_string_operation_name_is_a_clear_tool_error(catalog_campus: CampusHarness) -> None:
    result = await _tool(catalog_campus, TWO_NAMED, operationName=5)
    assert result.is_error and "operationName" in _text(result)


async def test_a_newline_in_the_operation_name_cannot_forge_a_log_line(
    catalog_campus: CampusHarness, caplog: pytest.LogCaptureFixture
) -> None:
    forged = "Courses\nERROR campus_mcp.web.app: the admin password is hunter2"
    result = await _tool(catalog_campus, TWO_NAMED, operationName=forged)
    assert result.is_error
    message = _text(result)
    assert "\nERROR" not in message and "Courses\\nERROR" in message
    assert "\nERROR campus_mcp" not in caplog.text
    # The capture is live (a line logged now is seen), so the absence above means something.
    logging.getLogger("campus_mcp.probe").warning("capture check")
    assert "capture check" in caplog.text


async def test_the_rest_log_holds_no_forged_line(served: ServedCampus) -> None:
    forged = "Courses\nERROR campus_mcp.web.app: the admin password is hunter2"
    async with httpx.AsyncClient(base_url=served.base, timeout=REFUSAL_DEADLINE_S) as client:
        response = await client.post("/api/v1/graphql", json={"query": TWO_NAMED, "operationName": forged})
    assert response.status_code == 400
    assert "Courses\\nERROR" in response.json()["message"]
    assert "\nERROR campus_mcp" not in served.log.read_text()


def test_escaped_writes_control_characters_as_escapes() -> None:
    assert escaped("a\nb\r\tc") == "a\\nb\\r\\tc"
    assert escaped("back\\slash") == "back\\\\slash"
    assert escaped("\x1b[31mred\u2028x\u202e") == "\\x1b[31mred\\u2028x\\u202e"
    assert escaped("Café 数学") == "Café 数学"  # printable text is left as it is
    assert escaped("x" * 500, limit=10) == "x" * 10 + "…"
