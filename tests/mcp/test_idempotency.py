"""Idempotency keys of write tools (seed 003, issue 12 point 5), through the real SDK client.

The throwaway study-note plugin of ``test_confirmation.py`` (one table, one write tool) is loaded
from that file, so both tests exercise the same tool.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from campus_mcp import utcnow
from campus_mcp.mcp.idempotency import KEYS_PER_OWNER, IdempotencyKey
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import update

_spec = importlib.util.spec_from_file_location("confirmation_notes", Path(__file__).with_name("test_confirmation.py"))
assert _spec is not None and _spec.loader is not None
notes_plugin: Any = sys.modules.setdefault("confirmation_notes", importlib.util.module_from_spec(_spec))
if not hasattr(notes_plugin, "Notes"):
    _spec.loader.exec_module(notes_plugin)  # registered first: SQLAlchemy resolves its annotations there

TOOL = "set_study_note"


@pytest.fixture
async def notes(campus_factory: CampusFactory) -> AsyncIterator[CampusHarness]:
    # Seed 000's "apply": a legacy client changes at once. The keys under "in_band" and "refuse":
    # tests/mcp/test_confirmation_in_band.py.
    campus = await campus_factory(
        plugins=[], extra_plugins=[("notes", notes_plugin.Notes())], confirmation_fallback="apply"
    )
    async with campus.deployment.engine.begin() as connection:
        await connection.run_sync(notes_plugin.NotesBase.metadata.create_all)
    notes_plugin.saves.clear()
    yield campus


def student(campus: CampusHarness, number: int = 1) -> Any:
    return campus.principal(None, user_id=number, username=f"student{number}")


async def test_the_write_tool_lists_the_optional_key(notes: CampusHarness) -> None:
    async with notes.mcp(principal=student(notes)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = listed[TOOL].input_schema
    assert schema["properties"]["idempotency_key"]["maxLength"] == 200
    assert "idempotency_key" not in schema.get("required", [])


async def test_a_repeat_with_the_same_key_answers_the_first_answer_and_changes_nothing(notes: CampusHarness) -> None:
    arguments = {"text": "Lab report due", "idempotency_key": "k-1"}
    async with notes.mcp(principal=student(notes)) as client:
        first = await client.call_tool(TOOL, arguments)
        # Meanwhile the note changes another way; the repeat must not put it back.
        await client.call_tool(TOOL, {"text": "Something newer"})
        again = await client.call_tool(TOOL, arguments)
    assert not again.is_error, again.content
    assert (
        again.structured_content
        == first.structured_content
        == {
            "text": "Lab report due",
            "version": 1,
            "result": "changed",
            "not_changed": None,
        }
    )
    assert notes_plugin.saves == ["Lab report due", "Something newer"]
    assert await notes_plugin._stored(notes) == ("Something newer", 2)


async def test_the_same_key_with_other_arguments_is_refused(notes: CampusHarness) -> None:
    async with notes.mcp(principal=student(notes)) as client:
        await client.call_tool(TOOL, {"text": "First", "idempotency_key": "k-2"})
        refused = await client.call_tool(TOOL, {"text": "Second", "idempotency_key": "k-2"})
    assert refused.is_error
    message = refused.content[0].text  # type: ignore[union-attr]
    assert "already used for a different call of set_study_note" in message
    assert "Use a new idempotency_key" in message
    assert await notes_plugin._stored(notes) == ("First", 1)


async def test_keys_belong_to_one_student(notes: CampusHarness) -> None:
    async with notes.mcp(principal=student(notes, 1)) as one:
        await one.call_tool(TOOL, {"text": "Mine", "idempotency_key": "shared"})
    async with notes.mcp(principal=student(notes, 2)) as two:
        theirs = await two.call_tool(TOOL, {"text": "Theirs", "idempotency_key": "shared"})
    assert theirs.structured_content["result"] == "changed"
    assert await notes_plugin._stored(notes, 2) == ("Theirs", 1)


@pytest.mark.parametrize("key", ["", "x" * 201, 7])
async def test_a_bad_key_is_refused_saying_what_a_key_is(notes: CampusHarness, key: Any) -> None:
    async with notes.mcp(principal=student(notes)) as client:
        refused = await client.call_tool(TOOL, {"text": "Never", "idempotency_key": key})
    assert refused.is_error
    assert "idempotency_key" in refused.content[0].text  # type: ignore[union-attr]
    assert await notes_plugin._stored(notes) is None


async def test_a_declined_call_does_not_use_up_its_key_and_a_repeat_asks_nothing(notes: CampusHarness) -> None:
    await notes_plugin._seed(notes)
    arguments = {"text": "Confirmed later", "idempotency_key": "k-3"}
    declining = notes_plugin.answering("decline")
    async with notes.mcp(principal=student(notes), mode="2026-07-28", elicitation_callback=declining) as client:
        declined = await client.call_tool(TOOL, arguments)
    assert declined.structured_content["result"] == "unchanged"
    accepting = notes_plugin.answering("accept")
    async with notes.mcp(principal=student(notes), mode="2026-07-28", elicitation_callback=accepting) as client:
        accepted = await client.call_tool(TOOL, arguments)
        repeat = await client.call_tool(TOOL, arguments)
    assert accepted.structured_content["result"] == "changed"
    assert repeat.structured_content == accepted.structured_content
    assert len(accepting.asked) == 1  # the repeat was answered from the key, not asked again
    assert await notes_plugin._stored(notes) == ("Confirmed later", 2)


async def test_a_key_is_forgotten_after_a_day(notes: CampusHarness) -> None:
    arguments = {"text": "Yesterday", "idempotency_key": "k-4"}
    async with notes.mcp(principal=student(notes)) as client:
        await client.call_tool(TOOL, arguments)
        await client.call_tool(TOOL, {"text": "Today"})
        async with notes.sessions() as session:
            # The host's own table, written as a day passing would leave it.
            await session.execute(update(IdempotencyKey).values(created_at=utcnow() - timedelta(hours=25)))
            await session.commit()
        again = await client.call_tool(TOOL, arguments)
    assert again.structured_content["version"] == 3
    assert await notes_plugin._stored(notes) == ("Yesterday", 3)


async def test_one_student_holds_at_most_the_key_limit_and_is_told_so(notes: CampusHarness) -> None:
    # Issue 30: one student could keep about 144,000 key rows a day. Fill student1's keys to one
    # short of the limit (rows as earlier calls left them), then call past it.
    async with notes.sessions() as session:
        session.add_all(
            IdempotencyKey(
                owner="student:1", tool=TOOL, key=f"old-{n}", arguments_digest="0" * 64, result={}, created_at=utcnow()
            )
            for n in range(KEYS_PER_OWNER - 1)
        )
        await session.commit()
    async with notes.mcp(principal=student(notes)) as client:
        last = await client.call_tool(TOOL, {"text": "The last one", "idempotency_key": "k-last"})
        refused = await client.call_tool(TOOL, {"text": "One more", "idempotency_key": "k-more"})
        repeat = await client.call_tool(TOOL, {"text": "The last one", "idempotency_key": "k-last"})
        without = await client.call_tool(TOOL, {"text": "No key"})
    async with notes.mcp(principal=student(notes, 2)) as other:
        theirs = await other.call_tool(TOOL, {"text": "Theirs", "idempotency_key": "k-more"})
    assert not last.is_error and refused.is_error
    message = refused.content[0].text  # type: ignore[union-attr]
    assert f"{KEYS_PER_OWNER:,} idempotency_keys" in message and "without idempotency_key" in message
    # The kept key still answers, a call without a key still changes, another student is not held.
    assert repeat.structured_content == last.structured_content
    assert not without.is_error and not theirs.is_error
    assert notes_plugin.saves == ["The last one", "No key", "Theirs"]
