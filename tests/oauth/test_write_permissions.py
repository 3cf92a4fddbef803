"""Write permissions without a dead end (issue 39, point 4), on the demo campus with every family,
served on loopback, with real registrations, the consent page and the MCP SDK client.

- The consent page says, under each change permission (they start unchecked), what checking it
  lets the app do: the tools it gives, each change confirmed first.
- A change without its permission answers with the step that adds it in the app the student
  uses (Claude Code, Claude, ChatGPT by their registered name), the general step for another app;
  the name chooses the words and is never repeated.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from campus_mcp.testing import CampusHarness, TestDatabases
from campus_mcp.testing.oauth import BrowserStudent, authorization_request, exchange_code, register_app

from tests.support.endpoints import mcp_client, served_demo_campus

MODERN = "2026-07-28"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


async def test_the_consent_page_says_what_each_unchecked_change_permission_lets_the_app_do(
    served: tuple[str, CampusHarness],
) -> None:
    base, _campus = served
    async with httpx.AsyncClient(timeout=30) as http:
        client_id = await register_app(http, base, "Study Helper")
    request = authorization_request(base, client_id, "settings:read settings:write notifications:write")
    student = BrowserStudent("student2", "demo")
    await student.approve(request.url)
    seen = student.last_consent
    assert seen is not None
    assert seen.boxes == {"settings:read": True, "settings:write": False, "notifications:write": False}
    page = seen.html.replace("&#x27;", "'")
    assert (
        "Checked, Study Helper can: Change a class's settings; Change calendar settings, each only after you "
        "confirm the change. Unchecked, it cannot; if you ask it to, it tells you how to come back here"
    ) in page, page
    assert "Checked, Study Helper can: Pause or resume reminders, each only after you confirm" in page
    # A permission that only reads says nothing of the kind.
    assert page.count("Checked, Study Helper can:") == 2


@pytest.mark.parametrize(
    ("app", "step"),
    [
        ("Claude Code (campus-7f)", "in Claude Code, run /mcp, choose Campus MCP, clear its authentication"),
        ("Claude", "in Claude, open Settings > Connectors, find Campus MCP and click Disconnect, then Connect"),
        ("ChatGPT", "in ChatGPT, open Settings, then Apps & Connectors, open Campus MCP and disconnect it"),
        ("Study Helper", "open the app's connector settings, disconnect Campus MCP, connect it again"),
    ],
)
async def test_a_change_without_its_permission_says_the_step_in_the_students_app(
    served: tuple[str, CampusHarness], app: str, step: str
) -> None:
    base, _campus = served
    async with httpx.AsyncClient(timeout=30) as http:
        client_id = await register_app(http, base, app)
        # Signed in as the app's student does, keeping the boxes as the page starts them.
        request = authorization_request(base, client_id, "settings:read settings:write")
        answered = await exchange_code(http, request, await BrowserStudent("student3", "demo").approve(request.url))
    assert answered.status_code == 200 and "settings:write" not in answered.json()["scope"].split()
    token = answered.json()["access_token"]
    for mode in ("legacy", MODERN):
        async with mcp_client(f"{base}/api/mcp", token, mode) as client:
            result = await client.call_tool("update_calendar_settings", {"level": "laboratory", "color": "sage"})
        said = "".join(item.text for item in result.content if isinstance(item, types.TextContent))
        assert result.is_error, said
        assert f"To add it: {step}" in said, said
        assert "check the box for 'settings:write' (Change your calendar settings) on the consent page" in said
        assert "campus-7f" not in said and "Study Helper" not in said, said
