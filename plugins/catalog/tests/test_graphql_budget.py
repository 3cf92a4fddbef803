"""GraphQL queries running at once, per address (issue 30, point 4): ten queries at the cost
limit sent together from one address once all ran at once and held the server (``/healthz``
took a median of 486 ms). Now at most ``graphql_in_flight`` run per address; the others are
refused at once with 429, Retry-After and words, another address is still served, and
``/healthz`` answers meanwhile.

Sent for real to ``campus-mcp serve`` on loopback; the test plays a trusted proxy that names
each request's address (X-Forwarded-For), so two addresses can come from one machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from campus_catalog.graphql import MAX_COST, query_cost
from campus_mcp.testing import CampusHarness, ServedCampus, serve
from graphql import parse
from mcp import Client

IN_FLIGHT = 1
AT_ONCE = 10
FLOODER = "198.51.100.7"
NEIGHBOUR = "198.51.100.8"

# Close to the cost limit: every section field, and each section's course and its sections.
COSTLY = (
    "{ sections(limit: 70) { total sections { crn title course_code open_seats capacity "
    "course { code title offered_sections(limit: 10) { total sections { crn title section_number "
    "meetings { days start end } course { code title } } } } } } }"
)


@pytest.fixture(scope="module")
def served(catalog_campus: CampusHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedCampus]:
    folder = tmp_path_factory.mktemp("graphql-budget")
    env = {
        "CAMPUS_MCP_DATABASE_URL": catalog_campus.settings.database_url,
        "CAMPUS_MCP_PLUGINS": "catalog",
        "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key",
        "CAMPUS_MCP_CONFIG": str(folder / "absent.toml"),
        "CAMPUS_MCP_TRUSTED_PROXIES": "127.0.0.1",
        "CAMPUS_MCP_CATALOG_GRAPHQL_IN_FLIGHT": str(IN_FLIGHT),
    }
    with serve(env, log_path=folder / "serve.log", args=["--no-prepare"], stop_timeout_s=10) as campus:
        yield campus


async def _query(client: httpx.AsyncClient, address: str) -> httpx.Response:
    return await client.post("/api/v1/graphql", json={"query": COSTLY}, headers={"X-Forwarded-For": address})


def test_the_query_is_near_the_cost_limit() -> None:
    assert MAX_COST * 8 // 10 < query_cost(parse(COSTLY), {}) <= MAX_COST


async def test_ten_at_once_from_one_address_run_within_the_budget(served: ServedCampus) -> None:
    async with httpx.AsyncClient(base_url=served.base, timeout=30) as client:
        answers = await asyncio.gather(*(_query(client, FLOODER) for _ in range(AT_ONCE)))
    served_ones = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code == 429]
    assert len(served_ones) + len(refused) == AT_ONCE, [a.text for a in answers]
    assert served_ones and refused, [a.status_code for a in answers]
    assert all(a.json()["data"]["sections"]["sections"] for a in served_ones)
    for answer in refused:
        assert answer.headers["Retry-After"] == "1"
        message = answer.json()["message"]
        assert "GraphQL queries running at once" in message and f"at most {IN_FLIGHT} at once" in message
        assert "Retry after 1 seconds" in message and "Traceback" not in answer.text


async def test_another_address_is_served_while_one_floods(served: ServedCampus) -> None:
    async with httpx.AsyncClient(base_url=served.base, timeout=30) as client:
        flood = [asyncio.create_task(_query(client, FLOODER)) for _ in range(AT_ONCE)]
        await asyncio.sleep(0)  # the flood is sent first
        neighbour = await _query(client, NEIGHBOUR)
        health = await client.get("/healthz")
        flooded = await asyncio.gather(*flood)
    assert neighbour.status_code == 200 and neighbour.json()["data"]["sections"]["sections"]
    assert health.status_code == 200
    assert any(a.status_code == 429 for a in flooded)


async def test_healthz_answers_while_the_queries_run(served: ServedCampus) -> None:
    async with httpx.AsyncClient(base_url=served.base, timeout=30) as client:
        flood = asyncio.gather(*(_query(client, f"198.51.100.{20 + i}") for i in range(AT_ONCE)))
        healths = [await client.get("/healthz") for _ in range(3)]
        flooded = await flood
    assert [h.status_code for h in healths] == [200, 200, 200]
    assert all(a.status_code == 200 for a in flooded)  # ten addresses: each within its own budget


async def test_the_tool_answers_the_budget_in_words(served: ServedCampus) -> None:
    async with Client(f"{served.base}/api/mcp") as client:
        results = await asyncio.gather(
            *(client.call_tool("catalog_graphql", {"query": COSTLY}) for _ in range(AT_ONCE))
        )
    refused = [r for r in results if r.is_error]
    assert refused and len(refused) < AT_ONCE
    for result in refused:
        text = " ".join(getattr(part, "text", "") for part in result.content)
        assert "Rate limited: too many GraphQL queries running at once" in text and "Retry after 1 seconds" in text
