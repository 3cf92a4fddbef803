"""How many SQL statements one call sends (issue 36, point 5), through the served app over HTTP.

A copy of the demo campus is served on loopback with sign-in required; student 1's app calls with
a real access token, as a client sends a ``tools/call`` on each wire (and the REST twin with a
personal token). Every statement the deployment's engine sends while the app answers that one
request is counted (an ASGI wrapper marks the request with a context variable, which the
request's tasks and SQLAlchemy's greenlets inherit), after two calls that warm the process up.
The access log of student data is off here: its batched writer's statements are its own, not
the call's. bench/call_cost.py prints the same counts for every tool; these tests hold the ones
a change brought down, so a statement that comes back fails here.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from typing import Any

import httpx
import pytest_asyncio
from campus_mcp import testing as kit
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app
from campus_mcp.testing.oauth import free_port, serve_on_loopback
from sqlalchemy import event

from tests.support.endpoints import token_for

LEGACY, MODERN = "2025-11-25", "2026-07-28"
WARM_UPS = 2
STUDENT1 = 1  # demo students' ids are their numbers

_COUNTING: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("counting", default=None)


class Counted:
    """The app, with the statements of the next request after :meth:`arm` written down."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._next: list[str] | None = None

    def arm(self) -> list[str]:
        self._next = []
        return self._next

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        statements, self._next = (self._next, None) if scope["type"] == "http" else (None, self._next)
        token = _COUNTING.set(statements)
        try:
            await self.app(scope, receive, send)
        finally:
            _COUNTING.reset(token)


def _statement(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
    found = _COUNTING.get()
    if found is not None:
        found.append(" ".join(statement.split()))


class Caller:
    def __init__(self, http: httpx.AsyncClient, counted: Counted, oauth: str, personal: str) -> None:
        self.http, self.counted, self.oauth, self.personal = http, counted, oauth, personal

    async def mcp(
        self, wire: str, tool: str, arguments: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """One ``tools/call`` as a client of ``wire`` sends it (a 2026-07-28 client declaring form
        elicitation): its JSON-RPC result and the statements it cost."""
        params: dict[str, Any] = {"name": tool, "arguments": dict(arguments)}
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": wire,
            "authorization": f"Bearer {self.oauth}",
        }
        if wire == MODERN:
            headers |= {"mcp-method": "tools/call", "mcp-name": tool}
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": wire,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            }
        params |= extra or {}
        statements = self.counted.arm()
        response = await self.http.post(
            "/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers=headers
        )
        assert response.status_code == 200, response.text
        answer = response.json()
        assert "result" in answer, answer
        return answer["result"], statements

    async def rest(self, path: str) -> tuple[Any, list[str]]:
        """One GET of a REST twin after the warm-ups (the token's first use writes when it was used)."""
        for _ in range(WARM_UPS + 1):
            statements = self.counted.arm()
            response = await self.http.get(path, headers={"authorization": f"Bearer {self.personal}"})
            assert response.status_code == 200, response.text
        return response.json(), statements

    async def read(self, wire: str, tool: str, arguments: Mapping[str, Any] | None = None) -> list[str]:
        """The statements of one call of a read tool after the warm-ups; the call must succeed."""
        for _ in range(WARM_UPS + 1):
            result, statements = await self.mcp(wire, tool, arguments or {})
            assert not result.get("isError"), result
        return statements


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[Caller, CampusHarness]]:
    port = free_port()
    url = await campus_databases.demo_copy()
    registry = load_registry(
        kit.test_settings(url, anonymous_access=False, public_url=f"http://127.0.0.1:{port}", student_access_log=False)
    )
    await asyncio.to_thread(upgrade, registry)
    campus = CampusHarness(app=harness_app(registry), registry=registry)
    counted = Counted(campus.app)
    engine = campus.deployment.engine.sync_engine
    event.listen(engine, "before_cursor_execute", _statement)
    try:
        async with (
            serve_on_loopback(counted, port) as base,
            httpx.AsyncClient(base_url=base, timeout=60) as http,
        ):
            oauth = await token_for(campus.deployment, registry.scopes)
            personal = await PersonalTokens(campus.sessions, registry.settings).create(
                STUDENT1, name="statements", scope=" ".join(registry.scopes), days=7
            )
            yield Caller(http, counted, oauth, personal), campus
    finally:
        event.remove(engine, "before_cursor_execute", _statement)
        await campus.close()
        with contextlib.suppress(Exception):
            await campus_databases.drop(url)


def _tables(statements: list[str]) -> list[str]:
    """Each statement's first words, for a failure that says which ones came."""
    return [" ".join(s.split()[:8]) for s in statements]


# -- the schedule family ----------------------------------------------------------------------


async def test_my_courses_is_four_statements_on_both_wires_as_on_rest(served: tuple[Caller, CampusHarness]) -> None:
    """The token; the terms with the student's (choosing the term, the note of a term without
    courses, and the page link, which takes them from the run: campus_schedule.call_readings); the
    term's sections with their courses, meetings and instructors; the seat watches. It was 15:
    every term as an ORM object, the section ids, then nine loads of the sections and their
    relations, then two more reads for the link; then 5, the link reading the terms again."""
    caller, _campus = served
    for wire in (LEGACY, MODERN):
        statements = await caller.read(wire, "my_courses")
        assert len(statements) == 4, _tables(statements)
    _answer, statements = await caller.rest("/api/v1/me/courses")
    assert len(statements) == 4, _tables(statements)  # no page links on REST


async def test_my_finals_and_course_history_read_the_sections_once(served: tuple[Caller, CampusHarness]) -> None:
    """my_finals: the token, the terms, the term's sections each with its exam in one statement
    (it was sixteen: the ORM load, then one read per exam). my_course_history: the token, the
    terms, every course of the record (it was 52: two reads per term)."""
    caller, _campus = served
    for tool in ("my_finals", "my_course_history"):
        statements = await caller.read(MODERN, tool)
        assert len(statements) == 3, (tool, _tables(statements))


async def test_busy_times_read_the_sections_with_their_exams_once(served: tuple[Caller, CampusHarness]) -> None:
    """my_busy_times: the token, the sections of every term the dates reach with their meetings,
    instructors, exams and term dates in one statement, the days without classes, the student's
    meetings: 4 (it was 18: the terms, nine per term for the ORM load, one per exam).
    friend_busy_times: the same after the friendship read, which also says whether the student
    takes a section, for its page link (the onboarded rule): 5 (20; 6 with the link's own read)."""
    caller, _campus = served
    monday = kit.campus_today() - timedelta(days=kit.campus_today().weekday())
    span = {"start_date": monday.isoformat(), "end_date": (monday + timedelta(days=13)).isoformat()}
    statements = await caller.read(MODERN, "my_busy_times", span)
    assert len(statements) == 4, _tables(statements)
    friends, _ = await caller.mcp(MODERN, "list_friends", {})
    friend = friends["structuredContent"]["friends"][0]["friend_id"]
    statements = await caller.read(MODERN, "friend_busy_times", {"friend_id": friend, **span})
    assert len(statements) == 5, _tables(statements)


async def test_list_friends_reads_the_onboarded_rule_with_the_friendships(served: tuple[Caller, CampusHarness]) -> None:
    """The token; the student's friendships with whether the student takes a section (the page
    link's onboarded rule) in one statement; the names. It was 4: the link read the enrollments
    again. The link is still there (student 1 takes sections)."""
    caller, _campus = served
    statements = await caller.read(MODERN, "list_friends")
    assert len(statements) == 3, _tables(statements)
    result, _ = await caller.mcp(MODERN, "list_friends", {})
    assert "/dashboard/friends" in str(result), result


# -- the settings family ----------------------------------------------------------------------


async def test_my_calendar_settings_is_six_statements(served: tuple[Caller, CampusHarness]) -> None:
    """The token; the class settings; the level settings; the kinds of the student's classes; the
    meetings with settings of their own with their sections, in one statement; the notifications.
    It was 18: each level's row and each class's row read again, and nine statements to load the
    one meeting's section."""
    caller, _campus = served
    for wire in (LEGACY, MODERN):
        statements = await caller.read(wire, "my_calendar_settings")
        assert len(statements) == 6, _tables(statements)
    answer, statements = await caller.rest("/api/v1/me/calendar-settings")
    assert len(statements) == 6, _tables(statements)
    assert answer["classes"], "student 1 of the demo has a class with settings of its own: its read is counted"


async def test_a_confirmed_level_change_is_six_statements_over_its_two_rounds(
    served: tuple[Caller, CampusHarness],
) -> None:
    """Round 1 (the question): the token and the student's level rows with the count of class
    settings and of class meetings per kind, in one statement. Round 2 (the ticked box): the
    token, the answer's nonce written once (the old ones go in a job), the same read for the
    "still current?" check, and the UPDATE checking the version the plan read (no read before it,
    none after). It was 7 and 12."""
    caller, _campus = served
    arguments = {"level": "laboratory", "color": "grape"}
    question, first = await caller.mcp(MODERN, "update_calendar_settings", arguments)
    assert "requestState" in question, question
    answered = {
        "inputResponses": {key: {"action": "accept", "content": {key: True}} for key in question["inputRequests"]},
        "requestState": question["requestState"],
    }
    result, second = await caller.mcp(MODERN, "update_calendar_settings", arguments, answered)
    assert not result.get("isError"), result
    assert result["structuredContent"]["settings"]["color"] == "grape"
    assert result["structuredContent"]["result"] in ("created", "updated")
    assert (len(first), len(second)) == (2, 4), (_tables(first), _tables(second))
