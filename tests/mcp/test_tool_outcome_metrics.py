"""campus_mcp_tool_calls_total{tool,outcome} counts a question and its answers (issue 12, point 9).

Each call goes through the real SDK client to the study-note write tool of ``test_confirmation.py``;
the count is read from the process's counters and from the ``/metrics`` text a scraper gets.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from campus_mcp.base import metrics
from campus_mcp.testing import CampusFactory, CampusHarness
from mcp.shared.exceptions import MCPError

_spec = importlib.util.spec_from_file_location("confirmation_notes", Path(__file__).with_name("test_confirmation.py"))
assert _spec is not None and _spec.loader is not None
notes_plugin: Any = sys.modules.setdefault("confirmation_notes", importlib.util.module_from_spec(_spec))
if not hasattr(notes_plugin, "Notes"):
    _spec.loader.exec_module(notes_plugin)  # registered first: SQLAlchemy resolves its annotations there

TOOL = "set_study_note"
MODERN = "2026-07-28"
SCRAPER_TOKEN = "scraper-token-for-this-test"


@pytest.fixture
async def notes(campus_factory: CampusFactory) -> AsyncIterator[CampusHarness]:
    campus = await campus_factory(
        plugins=[], extra_plugins=[("notes", notes_plugin.Notes())], metrics_token=SCRAPER_TOKEN
    )
    async with campus.deployment.engine.begin() as connection:
        await connection.run_sync(notes_plugin.NotesBase.metadata.create_all)
    await notes_plugin._seed(campus)
    yield campus


def counts() -> dict[str, int]:
    return {
        outcome: metrics.value("tool_calls_total", tool=TOOL, outcome=outcome) for outcome in metrics.TOOL_CALL_OUTCOMES
    }


def grew(before: dict[str, int]) -> dict[str, int]:
    now = counts()
    return {outcome: now[outcome] - before[outcome] for outcome in now if now[outcome] != before[outcome]}


def student(campus: CampusHarness, scopes: Any = None) -> Any:
    return campus.principal(scopes, user_id=1, username="student1")


@pytest.mark.parametrize(("action", "outcome"), [("accept", "ok"), ("decline", "declined"), ("cancel", "cancelled")])
async def test_a_question_and_its_answer_are_counted(notes: CampusHarness, action: Any, outcome: str) -> None:
    before = counts()
    callback = notes_plugin.answering(action)
    async with notes.mcp(principal=student(notes), mode=MODERN, elicitation_callback=callback) as client:
        await client.call_tool(TOOL, {"text": f"After {action}"})
    assert grew(before) == {"input_required": 1, outcome: 1}


async def test_a_legacy_change_and_a_missing_scope_are_counted(notes: CampusHarness) -> None:
    before = counts()
    async with notes.mcp(principal=student(notes)) as client:
        # A legacy client cannot be asked: the default "page" answers the question and the page's link.
        asked = await client.call_tool(TOOL, {"text": "Legacy"})
    assert not asked.is_error and asked.structured_content["not_changed"]["reason"] == "confirm_on_page"
    async with notes.mcp(principal=student(notes, scopes=[])) as client:
        denied = await client.call_tool(TOOL, {"text": "No scope"})
    assert denied.is_error
    assert grew(before) == {"confirmation_page": 1, "denied": 1}


async def test_a_bad_state_is_an_error_and_the_scraper_sees_every_outcome(notes: CampusHarness) -> None:
    before = counts()
    async with notes.mcp(
        principal=student(notes), mode=MODERN, elicitation_callback=notes_plugin.answering("accept")
    ) as client:
        first = await client.session.call_tool(TOOL, {"text": "Once"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        answer = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
        for _ in range(2):  # the second use of the state is a replay
            try:
                await client.session.call_tool(
                    TOOL, {"text": "Once"}, input_responses=answer, request_state=first.request_state
                )
            except MCPError as exc:
                assert exc.error.code == types.INVALID_PARAMS
    assert grew(before) == {"input_required": 1, "ok": 1, "error": 1}
    async with notes.rest() as rest:
        page = await rest.get("/metrics", headers={"Authorization": f"Bearer {SCRAPER_TOKEN}"})
    assert page.status_code == 200, page.text
    for outcome in ("input_required", "ok", "error"):
        assert f'campus_mcp_tool_calls_total{{outcome="{outcome}",tool="{TOOL}"}}' in page.text
