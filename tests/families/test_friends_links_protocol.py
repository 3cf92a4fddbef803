"""Page links of the friends tools go only to clients on protocol 2025-06-18 or later (seed 000
"Page links"): an older client may check content against a closed list and refuse the result.
Over real HTTP on /api/mcp with a bearer token, as a client calls."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from campus_catalog.models import Section
from campus_mcp.oauth.token_cli import issue
from campus_mcp.testing import CampusFactory, CampusHarness, campus_today
from campus_schedule.enrollment import has_courses
from campus_schedule.models import Enrollment
from sqlalchemy import select
from sqlalchemy.orm import selectinload

ACCEPT = "application/json, text/event-stream"
MONDAY = campus_today() - timedelta(days=campus_today().weekday())
WEEK = {"start_date": MONDAY.isoformat(), "end_date": (MONDAY + timedelta(days=6)).isoformat()}


async def onboard(campus: CampusHarness, student_id: int) -> None:
    """One section for the student, so the onboarded rule lets the links through."""
    async with campus.deployment.session() as session, session.begin():
        if await has_courses(session, student_id):
            return
        section = (
            await session.scalars(
                select(Section).options(selectinload(Section.term)).where(Section.cancelled.is_(False)).limit(1)
            )
        ).one()
        session.add(
            Enrollment(
                student_id=student_id, term_uid=section.term.uid, section_id=section.id, crn=section.crn, source="demo"
            )
        )


def _result(response: Any) -> dict[str, Any]:
    text = response.text
    if text.startswith("event:") or "\ndata:" in text or text.startswith("data:"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    result: dict[str, Any] = json.loads(text)["result"]
    return result


@pytest.mark.parametrize(
    ("version", "links"), [("2025-03-26", 0), ("2025-06-18", 1), ("2025-11-25", 1)], ids=lambda v: str(v)
)
async def test_links_only_from_protocol_2025_06_18(campus_factory: CampusFactory, version: str, links: int) -> None:
    campus = await campus_factory(demo=True)
    await onboard(campus, 1)
    token, _scope = await issue(campus.deployment, "student1", ["friends:read"], 10)
    headers = {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": version,
        "Authorization": f"Bearer {token}",
    }
    async with campus.rest() as client:
        for request_id, (tool, arguments) in enumerate(
            [("list_friends", {}), ("friend_busy_times", {"friend_id": 2, **WEEK})], start=1
        ):
            body = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
            response = await client.post("/api/mcp", content=json.dumps(body), headers=headers)
            assert response.status_code == 200, response.text
            result = _result(response)
            assert not result.get("isError"), result
            types = [item["type"] for item in result["content"]]
            assert types == ["text"] + ["resource_link"] * links, (tool, version, types)
            assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
