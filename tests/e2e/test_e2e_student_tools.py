"""What a student does on a fresh demo campus: ``campus-mcp serve`` with its defaults, then an MCP
client signs in as ``student1`` through the real pages and calls the six student tools, in both
protocol eras; without a token the server answers 401 with its ``WWW-Authenticate`` challenge.

The server runs as a real subprocess (migrations, demo load, uvicorn) on a free loopback port with
a database of its own (SQLite, or PostgreSQL when the suite runs against it), with no
``CAMPUS_MCP_ANONYMOUS_ACCESS``: sign-in is the default. The sign-in is the SDK's
``OAuthClientProvider`` (discovery from the 401, registration, PKCE), the login and consent forms
submitted over HTTP by the kit's browser stand-in. What each answer should hold is read from the
server's database: student1's own sections, friends and meeting.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import httpx2
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.testing import TestDatabases, campus_today, serve
from campus_mcp.testing.oauth import BrowserStudent, MemoryStorage, provider_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import select

STUDENT1 = 1  # demo students' ids are their numbers
SIX_TOOLS = ("my_courses", "my_course_history", "my_busy_times", "my_finals", "list_friends", "friend_busy_times")


async def student1_facts(database_url: str) -> dict[str, Any]:
    """What the demo campus gave student1: sections by term, and the titles of their events."""
    from campus_schedule.models import Enrollment, StudentEvent

    engine = make_engine(database_url)
    try:
        async with make_sessions(engine)() as session:
            rows = (
                await session.execute(
                    select(Enrollment.term_uid, Enrollment.crn).where(Enrollment.student_id == STUDENT1)
                )
            ).all()
            events = (await session.scalars(select(StudentEvent.title).where(StudentEvent.owner_id == STUDENT1))).all()
    finally:
        await engine.dispose()
    by_term: dict[str, set[str]] = {}
    for term_uid, crn in rows:
        by_term.setdefault(term_uid, set()).add(crn)
    return {"by_term": by_term, "crns": {crn for _, crn in rows}, "events": set(events)}


async def signed_in_calls(mcp_url: str, mode: str) -> tuple[str, BrowserStudent, dict[str, Any]]:
    """Sign in as student1 (a fresh client each time) and call the six tools; the era, and the answers."""
    student = BrowserStudent("student1", "demo")  # keeps the consent page's boxes as they start
    # From this week's Monday: the demo's study meeting is on this week's Wednesday, which is
    # already past on a Thursday to Sunday.
    start = campus_today() - timedelta(days=campus_today().weekday())
    span = {"start_date": start.isoformat(), "end_date": (start + timedelta(days=13)).isoformat()}
    answers: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(auth=provider_for(mcp_url, student, MemoryStorage()), timeout=60) as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert set(SIX_TOOLS) <= listed, f"missing: {set(SIX_TOOLS) - listed}"
        for name in ("my_courses", "my_course_history", "my_finals", "list_friends"):
            answers[name] = await client.call_tool(name, {})
        answers["my_busy_times"] = await client.call_tool("my_busy_times", span)
        friends = answers["list_friends"].structured_content or {}
        student2 = next((f for f in friends.get("friends", []) if f["username"] == "student2"), None)
        assert student2 is not None, friends
        answers["friend_busy_times"] = await client.call_tool(
            "friend_busy_times", {"friend_id": student2["friend_id"], **span}
        )
        version = str(client.protocol_version)
    for name, answer in answers.items():
        assert not answer.is_error, f"{name} in {mode}: {answer.content}"
    return version, student, {name: answer.structured_content for name, answer in answers.items()}


def assert_student1_data(answers: dict[str, Any], facts: dict[str, Any]) -> None:
    courses = answers["my_courses"]
    term = courses["term"]["uid"]
    # my_courses lists exactly student1's sections of the term it answers for.
    assert {c["crn"] for c in courses["courses"]} == facts["by_term"][term]

    history = answers["my_course_history"]
    past = {c["crn"] for t in history["terms"] for c in t["courses"]}
    assert past and past <= facts["crns"]

    finals = answers["my_finals"]
    listed = {f["crn"] for f in finals["finals"]} | {c["crn"] for c in finals["without_final"]}
    assert listed and listed <= facts["by_term"][finals["term"]["uid"]]

    busy = answers["my_busy_times"]["busy"]
    assert busy, "student1 has classes and a study meeting this week and next"
    assert {b["crn"] for b in busy if b["kind"] in ("class", "final")} <= facts["crns"]
    assert {b["meeting_title"]["untrusted_text"] for b in busy if b["kind"] == "meeting"} & facts["events"]

    friends = answers["list_friends"]
    assert sorted(f["username"] for f in friends["friends"]) == ["student2", "student3"]
    assert [r["username"] for r in friends["requests_received"]] == ["student4"]
    assert [r["username"] for r in friends["requests_sent"]] == ["student5"]

    friend_busy = answers["friend_busy_times"]["busy"]
    assert friend_busy, "student2 has classes this week and next"
    # Only when (as instants and as campus-time text), never what.
    when = {"start", "end", "date", "start_time", "end_time", "start_12h", "end_12h"}
    assert all(set(block) == when for block in friend_busy), friend_busy[0]


async def test_sign_in_as_student1_then_the_six_tools_in_both_eras(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.empty()
    env = {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        # No CAMPUS_MCP_ANONYMOUS_ACCESS: what `make serve` does. The jobs would fetch from the
        # campus's servers; this test stays on loopback.
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    with serve(env, log_path=tmp_path / "serve.log") as served:
        base, mcp_url = served.base, served.mcp_url
        # Anonymous: the 401 and the challenge that starts the sign-in.
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        async with httpx.AsyncClient(timeout=30) as plain:
            anonymous = await plain.post(
                mcp_url, json=initialize, headers={"Accept": "application/json, text/event-stream"}
            )
        assert anonymous.status_code == 401
        challenge = anonymous.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and f'resource_metadata="{base}/.well-known/' in challenge
        assert "Traceback" not in anonymous.text

        facts = await student1_facts(database_url)
        for mode, version in (("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")):
            seen_version, student, answers = await signed_in_calls(mcp_url, mode)
            assert seen_version == version
            # The consent page offered the student tools' read scopes, checked.
            assert student.last_consent is not None
            assert student.last_consent.boxes.get("schedule:read") is True
            assert student.last_consent.boxes.get("friends:read") is True
            assert_student1_data(answers, facts)
    await campus_databases.drop(database_url)
