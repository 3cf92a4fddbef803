"""Confirmation in the chat for a client that cannot be asked (issue 28, point 1), through the SDK client.

The throwaway study-note plugin of ``test_confirmation.py`` (one table, a version counter, one
write tool) is loaded from that file. A legacy-era client and a 2026-07-28 client without form
elicitation cannot show the form: under ``confirmation_fallback = "in_band"`` the
first call changes nothing and answers the question and a code (a campus's choice since issue 39;
the default is the confirmation page, tests/test_confirmation_page.py); the code makes the change once,
and only for the same tool, student, arguments and record, within ten minutes. ``apply`` changes
at once, ``refuse`` never; idempotency keys work under all three; /metrics counts both steps.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from campus_mcp.base import metrics
from campus_mcp.testing import CampusFactory, CampusHarness
from mcp_types import CallToolResult, TextContent

from tests.support.endpoints import confirmation_code_in

_spec = importlib.util.spec_from_file_location("confirmation_notes", Path(__file__).with_name("test_confirmation.py"))
assert _spec is not None and _spec.loader is not None
notes_plugin: Any = sys.modules.setdefault("confirmation_notes", importlib.util.module_from_spec(_spec))
if not hasattr(notes_plugin, "Notes"):
    _spec.loader.exec_module(notes_plugin)  # registered first: SQLAlchemy resolves its annotations there

TOOL = "set_study_note"
MODERN = "2026-07-28"
QUESTION = 'Change your study note.\nNote: "Read chapter 3" -> "Quiz on Friday"'
Campus = Callable[..., Awaitable[CampusHarness]]


@pytest.fixture
async def make_notes(campus_factory: CampusFactory) -> AsyncIterator[Campus]:
    async def make(**settings: Any) -> CampusHarness:
        # The code in the chat is a campus's choice since issue 39 (the default is the page).
        settings.setdefault("confirmation_fallback", "in_band")
        campus = await campus_factory(plugins=[], extra_plugins=[("notes", notes_plugin.Notes())], **settings)
        async with campus.deployment.engine.begin() as connection:
            await connection.run_sync(notes_plugin.NotesBase.metadata.create_all)
        await notes_plugin._seed(campus)
        await notes_plugin._seed(campus, "Lab report due", student=2)
        return campus

    notes_plugin.saves.clear()
    yield make


def text(result: CallToolResult) -> str:
    return "".join(item.text for item in result.content if isinstance(item, TextContent))


async def call(campus: CampusHarness, arguments: dict[str, Any], *, student: int = 1, mode: str = "legacy") -> Any:
    principal = campus.principal(None, user_id=student, username=f"student{student}")
    async with campus.mcp(principal=principal, mode=mode) as client:
        return await client.call_tool(TOOL, arguments)


async def first_code(campus: CampusHarness, arguments: dict[str, Any], **who: Any) -> str:
    asked = await call(campus, arguments, **who)
    assert asked.is_error, asked.content
    return confirmation_code_in(text(asked))


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_client_that_cannot_be_asked_gets_the_question_and_a_code_then_the_code_changes_it_once(
    make_notes: Campus, mode: str
) -> None:
    notes = await make_notes()
    asked = await call(notes, {"text": "Quiz on Friday"}, mode=mode)
    said = text(asked)
    # The question the form would show, word for word, and what to do with the code.
    assert asked.is_error and QUESTION in said
    assert said.startswith("Nothing was changed yet") and "Only if the student agrees in the chat" in said
    assert await notes_plugin._stored(notes) == ("Read chapter 3", 1) and notes_plugin.saves == []

    code = confirmation_code_in(said)
    done = await call(notes, {"text": "Quiz on Friday", "confirmation": code}, mode=mode)
    assert not done.is_error, done.content
    assert done.structured_content["result"] == "changed"
    assert await notes_plugin._stored(notes) == ("Quiz on Friday", 2)

    again = await call(notes, {"text": "Quiz on Friday", "confirmation": code}, mode=mode)
    assert again.is_error and "already used" in text(again)
    assert notes_plugin.saves == ["Quiz on Friday"]


async def test_a_code_with_other_arguments_or_of_another_student_or_tool_is_refused(make_notes: Campus) -> None:
    notes = await make_notes()
    code = await first_code(notes, {"text": "Quiz on Friday"})

    other_text = await call(notes, {"text": "Skip the quiz", "confirmation": code})
    assert other_text.is_error and "given for other arguments" in text(other_text)
    other_student = await call(notes, {"text": "Quiz on Friday", "confirmation": code}, student=2)
    assert other_student.is_error and "given to another student" in text(other_student)
    forged = await call(notes, {"text": "Quiz on Friday", "confirmation": code[:-4] + "AAAA"})
    assert forged.is_error and "not a code this server gave" in text(forged)
    for refused in (other_text, other_student, forged):
        # What to do instead, in words a model can follow.
        assert "without confirmation to get the current question" in text(refused)
    assert await notes_plugin._stored(notes) == ("Read chapter 3", 1)
    assert await notes_plugin._stored(notes, student=2) == ("Lab report due", 1)

    # None of those used the code up: the student's own call with it still works.
    done = await call(notes, {"text": "Quiz on Friday", "confirmation": code})
    assert done.structured_content["result"] == "changed"


async def test_a_code_after_the_record_changed_is_refused(make_notes: Campus) -> None:
    notes = await make_notes()
    code = await first_code(notes, {"text": "Quiz on Friday"})
    # The note changes another way (another question, confirmed) after the code was given.
    other = await first_code(notes, {"text": "Bring a calculator"})
    await call(notes, {"text": "Bring a calculator", "confirmation": other})
    stale = await call(notes, {"text": "Quiz on Friday", "confirmation": code})
    assert stale.is_error and "record changed since this code was given" in text(stale)
    assert await notes_plugin._stored(notes) == ("Bring a calculator", 2)


async def test_a_code_after_ten_minutes_is_refused(make_notes: Campus, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = await make_notes()
    code = await first_code(notes, {"text": "Quiz on Friday"})
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 601)
    late = await call(notes, {"text": "Quiz on Friday", "confirmation": code})
    assert late.is_error and "expired" in text(late) and "10 minutes" in text(late)
    assert await notes_plugin._stored(notes) == ("Read chapter 3", 1)


async def test_a_modern_client_with_form_elicitation_is_still_asked_by_the_form(make_notes: Campus) -> None:
    notes = await make_notes()
    callback = notes_plugin.answering("accept")
    principal = notes.principal(None, user_id=1, username="student1")
    async with notes.mcp(principal=principal, mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool(TOOL, {"text": "Quiz on Friday"})
    assert not result.is_error and result.structured_content["result"] == "changed"
    assert callback.asked == [QUESTION]


@pytest.mark.parametrize(
    ("fallback", "words", "stored"),
    [
        ("apply", "In any other, the change is saved at once", ("Quiz on Friday", 2)),
        ("refuse", "In any other, nothing changes", ("Read chapter 3", 1)),
        ("in_band", "call again, same arguments plus confirmation", ("Read chapter 3", 1)),
    ],
)
async def test_the_setting_chooses_what_a_client_that_cannot_be_asked_gets_and_the_description_says_it(
    make_notes: Campus, fallback: str, words: str, stored: tuple[str, int]
) -> None:
    notes = await make_notes(confirmation_fallback=fallback)
    principal = notes.principal(None, user_id=1, username="student1")
    async with notes.mcp(principal=principal) as client:
        (tool,) = (await client.list_tools()).tools
        result = await client.call_tool(TOOL, {"text": "Quiz on Friday"})
    assert "A client with form elicitation asks the student first." in (tool.description or "")
    assert words in (tool.description or "")
    assert ("confirmation" in tool.input_schema["properties"]) == (fallback == "in_band")
    assert await notes_plugin._stored(notes) == stored
    if fallback == "refuse":
        assert result.is_error and "campus dashboard" in text(result)


async def test_an_idempotency_key_works_with_each_setting(make_notes: Campus) -> None:
    key = {"idempotency_key": "note-change-1"}
    # in_band: the key is kept by the confirmed call; the same call again replays it, code and all.
    notes = await make_notes()
    code = await first_code(notes, {"text": "Quiz on Friday", **key})
    done = await call(notes, {"text": "Quiz on Friday", **key, "confirmation": code})
    replay = await call(notes, {"text": "Quiz on Friday", **key, "confirmation": code})
    assert replay.structured_content == done.structured_content
    without_code = await call(notes, {"text": "Quiz on Friday", **key})
    assert without_code.structured_content == done.structured_content
    assert notes_plugin.saves == ["Quiz on Friday"]

    # apply: the first call changes and keeps the key.
    notes_plugin.saves.clear()
    applied = await make_notes(confirmation_fallback="apply")
    once = await call(applied, {"text": "Quiz on Friday", **key})
    twice = await call(applied, {"text": "Quiz on Friday", **key})
    assert once.structured_content == twice.structured_content and notes_plugin.saves == ["Quiz on Friday"]

    # refuse: nothing changes and nothing is kept, so the key stays free for a confirmed change.
    refusing = await make_notes(confirmation_fallback="refuse")
    for _ in range(2):
        refused = await call(refusing, {"text": "Quiz on Friday", **key})
        assert refused.is_error and "Nothing was changed" in text(refused)
    assert await notes_plugin._stored(refusing) == ("Read chapter 3", 1)


async def test_metrics_count_the_question_and_the_confirmed_change(make_notes: Campus) -> None:
    def count(outcome: str) -> int:
        return metrics.value("tool_calls_total", tool=TOOL, outcome=outcome)

    notes = await make_notes()
    before = {o: count(o) for o in ("confirmation_requested", "confirmed_in_band", "ok", "error")}
    code = await first_code(notes, {"text": "Quiz on Friday"})
    await call(notes, {"text": "Quiz on Friday", "confirmation": code})
    await call(notes, {"text": "Quiz on Friday", "confirmation": code})  # used up: an error
    grew = {o: count(o) - n for o, n in before.items()}
    assert grew == {"confirmation_requested": 1, "confirmed_in_band": 1, "ok": 0, "error": 1}
