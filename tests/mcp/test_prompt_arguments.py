"""A bad prompt argument is refused by name (issue 37, point 9), over HTTP on the kit's demo campus.

``prompts/get`` takes its arguments as strings; a client that sends a number, a null or an array
got the SDK's bare "Invalid request parameters" before, which names nothing. Now the -32602 says
which argument and what to give; an unknown one was already named.
"""

from __future__ import annotations

from typing import Any

import pytest
from campus_mcp.testing import CampusHarness

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


async def _error(campus: CampusHarness, arguments: Any) -> dict[str, Any]:
    request = {"name": "plan_term_schedule", "arguments": arguments}
    async with campus.rest() as client:
        response = await client.post(
            "/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": request}, headers=HEADERS
        )
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == -32602
    return error


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"term": 202710}, "Prompt argument 'term' must be text (a string), not a number"),
        (
            {"preferences": None, "term": "Spring 2027"},
            "Prompt argument 'preferences' must be text (a string), not null",
        ),
        ({"courses": ["COMP 1000"]}, "Prompt argument 'courses' must be text (a string), not an array"),
        (["Spring 2027"], "Prompt arguments must be an object of argument names and strings, not an array"),
        ({"semester": "Spring 2027"}, "Unknown argument(s) semester for plan_term_schedule"),
    ],
)
async def test_a_bad_prompt_argument_is_named(demo_campus: CampusHarness, arguments: Any, said: str) -> None:
    error = await _error(demo_campus, arguments)
    assert said in error["message"], error
