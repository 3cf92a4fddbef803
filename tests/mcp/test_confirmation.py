"""Confirmation of a change (seed 000 "Confirmation", issue 12 point 4), end to end.

A throwaway plugin defined here has one table (a study note per student, with a version
counter) and one write tool. Every call goes through the real SDK ``Client``: in 2026-07-28
mode with an ``elicitation_callback`` (the student's answer), in the legacy era, and round by
round through ``client.session.call_tool(..., allow_input_required=True)`` to replay states.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any, Literal

import mcp_types as types
import pytest
from campus_mcp import (
    NotChanged,
    PlannedChange,
    PluginInfo,
    Scope,
    Tool,
    ToolContext,
    confirmation_template,
    hookimpl,
    not_changed,
)
from campus_mcp.testing import CampusFactory, CampusHarness
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Integer, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

MODERN = "2026-07-28"


class NotesBase(DeclarativeBase):
    # Its own metadata: the throwaway table must not join the host's (migration checks read it).
    pass


class StudyNote(NotesBase):
    __tablename__ = "test_study_notes"

    student_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(String(2000))
    version: Mapped[int] = mapped_column(Integer)


class NoteChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000, description="The new study note.")


class NoteAnswer(BaseModel):
    text: str | None
    version: int
    result: Literal["changed", "unchanged"]
    not_changed: NotChanged | None = None


# How many times the tool's run made the change, so a test sees that nothing ran.
saves: list[str] = []


async def _note(context: ToolContext) -> StudyNote | None:
    async with context.session() as session:
        return await session.get(StudyNote, context.user_id)


async def plan_note(context: ToolContext, args: NoteChange) -> PlannedChange | None:
    note = await _note(context)
    if note is not None and note.text == args.text:
        return None
    old = confirmation_template(note.text) if note is not None else "(none)"
    return PlannedChange(
        message=f"Change your study note.\nNote: {old} -> {confirmation_template(args.text)}",
        version=str(note.version) if note is not None else "none",
    )


async def set_note(context: ToolContext, args: NoteChange) -> NoteAnswer:
    if context.confirmation in ("declined", "cancelled", "nothing_to_change"):
        note = await _note(context)
        return NoteAnswer(
            text=note.text if note else None,
            version=note.version if note else 0,
            result="unchanged",
            not_changed=not_changed(context.confirmation) if context.confirmation != "nothing_to_change" else None,
        )
    async with context.session() as session:
        note = await session.get(StudyNote, context.user_id)
        if note is None:
            note = StudyNote(student_id=context.user_id, text=args.text, version=1)
            session.add(note)
        else:
            note.text, note.version = args.text, note.version + 1
        await session.commit()
        saves.append(args.text)
        return NoteAnswer(text=note.text, version=note.version, result="changed")


class Notes:
    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="notes", version="1.0", title="Study notes", description="A note per student.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [Scope(name="notes:write", description="Change your study note.", writes=True)]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [
            Tool(
                name="set_study_note",
                title="Set your study note",
                description="Changes the student's study note.",
                scope="notes:write",
                input_model=NoteChange,
                output_model=NoteAnswer,
                handler=set_note,
                plan=plan_note,
                writes=True,
                no_route_reason="a test plugin",
            )
        ]


@pytest.fixture
async def notes(campus_factory: CampusFactory) -> AsyncIterator[CampusHarness]:
    campus = await campus_factory(plugins=[], extra_plugins=[("notes", Notes())])
    async with campus.deployment.engine.begin() as connection:
        await connection.run_sync(NotesBase.metadata.create_all)
    saves.clear()
    yield campus


async def _stored(campus: CampusHarness, student: int = 1) -> tuple[str, int] | None:
    async with campus.sessions() as session:
        note = await session.get(StudyNote, student)
        return (note.text, note.version) if note else None


async def _seed(campus: CampusHarness, text: str = "Read chapter 3", student: int = 1) -> None:
    async with campus.sessions() as session:
        session.add(StudyNote(student_id=student, text=text, version=1))
        await session.commit()


def answering(action: Literal["accept", "decline", "cancel"], confirm: bool | None = True) -> Any:
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.requested_schema["required"] == ["confirm"]
        asked.append(params.message)
        content = {"confirm": confirm} if action == "accept" and confirm is not None else None
        return types.ElicitResult(action=action, content=content)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


def _student(campus: CampusHarness, student: int = 1) -> Any:
    return campus.principal(None, user_id=student, username=f"student{student}")


async def test_accepting_the_question_makes_the_change(notes: CampusHarness) -> None:
    await _seed(notes)
    callback = answering("accept")
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool("set_study_note", {"text": 'Quiz "Friday"\nbring notes'})
    assert not result.is_error, result.content
    assert result.structured_content["result"] == "changed"
    assert callback.asked == ['Change your study note.\nNote: "Read chapter 3" -> "Quiz \\"Friday\\"\\nbring notes"']
    assert await _stored(notes) == ('Quiz "Friday"\nbring notes', 2)


@pytest.mark.parametrize(
    ("action", "confirm", "reason"),
    [("decline", None, "declined"), ("cancel", None, "cancelled"), ("accept", False, "declined")],
)
async def test_decline_cancel_or_a_clear_box_changes_nothing(
    notes: CampusHarness, action: Literal["accept", "decline", "cancel"], confirm: bool | None, reason: str
) -> None:
    await _seed(notes)
    callback = answering(action, confirm)
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool("set_study_note", {"text": "Something else"})
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["result"] == "unchanged"
    assert answer["text"] == "Read chapter 3"
    assert answer["not_changed"]["reason"] == reason
    assert answer["not_changed"]["message"]
    assert len(callback.asked) == 1
    assert await _stored(notes) == ("Read chapter 3", 1)
    assert saves == []


async def test_nothing_to_change_asks_nothing(notes: CampusHarness) -> None:
    await _seed(notes)
    callback = answering("accept")
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool("set_study_note", {"text": "Read chapter 3"})
    assert result.structured_content["result"] == "unchanged"
    assert callback.asked == []
    assert await _stored(notes) == ("Read chapter 3", 1)


async def test_a_legacy_client_is_not_asked_and_changes_nothing_on_its_first_call(notes: CampusHarness) -> None:
    # Issue 28: no longer seed 000's silent change. Issue 39: the question and a link to the
    # confirmation page come back, not as an error (the code in the chat, a campus's choice now:
    # tests/mcp/test_confirmation_in_band.py; the page: tests/mcp/test_confirmation_across_processes.py).
    await _seed(notes)
    callback = answering("decline")
    async with notes.mcp(principal=_student(notes), mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("set_study_note", {"text": "Legacy change"})
    assert not result.is_error and result.structured_content["result"] == "unchanged"
    waiting = result.structured_content["not_changed"]
    assert waiting["reason"] == "confirm_on_page" and 'Note: "Read chapter 3" -> "Legacy change"' in waiting["message"]
    assert f"{notes.settings.base_url}/confirm/" in waiting["message"]
    assert callback.asked == [] and saves == []
    assert await _stored(notes) == ("Read chapter 3", 1)


async def test_a_modern_client_without_form_elicitation_is_not_asked(notes: CampusHarness) -> None:
    async with notes.mcp(principal=_student(notes), mode=MODERN) as client:
        result = await client.call_tool("set_study_note", {"text": "First note"})
    assert not result.is_error and result.structured_content["not_changed"]["reason"] == "confirm_on_page"
    assert await _stored(notes) is None


async def _first_round(client: Any, arguments: dict[str, Any]) -> types.InputRequiredResult:
    first = await client.session.call_tool("set_study_note", arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    assert first.request_state and set(first.input_requests or {}) == {"confirm"}
    return first


ACCEPT = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}


async def _retry(client: Any, arguments: dict[str, Any], state: str | None) -> Any:
    return await client.session.call_tool(
        "set_study_note", arguments, input_responses=ACCEPT, request_state=state, allow_input_required=True
    )


async def test_a_replayed_state_is_refused(notes: CampusHarness) -> None:
    await _seed(notes)
    arguments = {"text": "Once only"}
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=answering("accept")) as client:
        first = await _first_round(client, arguments)
        done = await _retry(client, arguments, first.request_state)
        assert isinstance(done, types.CallToolResult) and done.structured_content["result"] == "changed"
        with pytest.raises(MCPError) as replay:
            await _retry(client, arguments, first.request_state)
    assert replay.value.error.code == types.INVALID_PARAMS
    assert replay.value.error.message == "Invalid or expired requestState"
    assert await _stored(notes) == ("Once only", 2)


async def test_a_state_of_another_student_is_refused(notes: CampusHarness) -> None:
    await _seed(notes, student=1)
    await _seed(notes, student=2)
    arguments = {"text": "Not yours"}
    async with notes.mcp(principal=_student(notes, 1), mode=MODERN, elicitation_callback=answering("accept")) as one:
        first = await _first_round(one, arguments)
    async with notes.mcp(principal=_student(notes, 2), mode=MODERN, elicitation_callback=answering("accept")) as two:
        with pytest.raises(MCPError) as refused:
            await _retry(two, arguments, first.request_state)
    assert refused.value.error.message == "Invalid or expired requestState"
    assert await _stored(notes, 1) == ("Read chapter 3", 1)
    assert await _stored(notes, 2) == ("Read chapter 3", 1)


async def test_a_state_for_other_arguments_is_refused(notes: CampusHarness) -> None:
    await _seed(notes)
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=answering("accept")) as client:
        first = await _first_round(client, {"text": "What I was asked"})
        with pytest.raises(MCPError) as refused:
            await _retry(client, {"text": "Something I was not asked"}, first.request_state)
    assert refused.value.error.message == "Invalid or expired requestState"
    assert await _stored(notes) == ("Read chapter 3", 1)


async def test_a_state_after_ten_minutes_is_refused(notes: CampusHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    await _seed(notes)
    arguments = {"text": "Too late"}
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=answering("accept")) as client:
        first = await _first_round(client, arguments)
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() + 601)  # the clock the seal reads
        with pytest.raises(MCPError) as refused:
            await _retry(client, arguments, first.request_state)
        monkeypatch.setattr(time, "time", real)
    assert refused.value.error.message == "Invalid or expired requestState"
    assert await _stored(notes) == ("Read chapter 3", 1)


async def test_a_record_changed_meanwhile_asks_again(notes: CampusHarness) -> None:
    await _seed(notes)
    arguments = {"text": "After the other change"}
    async with notes.mcp(principal=_student(notes), mode=MODERN, elicitation_callback=answering("accept")) as client:
        first = await _first_round(client, arguments)
        async with notes.sessions() as session:
            note = await session.scalar(select(StudyNote).where(StudyNote.student_id == 1))
            assert note is not None
            note.text, note.version = "Changed in another tab", 2
            await session.commit()
        again = await _retry(client, arguments, first.request_state)
    assert isinstance(again, types.InputRequiredResult)
    assert '"Changed in another tab"' in again.input_requests["confirm"].params.message  # type: ignore[index,union-attr]
    assert await _stored(notes) == ("Changed in another tab", 2)
