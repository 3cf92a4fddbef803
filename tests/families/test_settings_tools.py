"""The settings family through the real MCP client (issue 12, points 1, 2, 3, 6): hostile
templates never pass the allow list, the resolver's levels and sources, the confirmation
messages, decline, and two clients changing one row at once.

The refusals and the preview change nothing, so they run on the session's shared ``demo_campus``
(the kit's campus for tests that change no data), each asserting that no settings row changed;
every test that changes a setting builds a campus of its own (``campus``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import mcp_types as types
import pytest
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_settings.demo import first_meeting_id
from campus_settings.models import ClassSetting, LevelSetting, NotificationSetting
from sqlalchemy import select

MODERN = "2026-07-28"


def answering(action: Literal["accept", "decline", "cancel"], confirm: bool | None = True) -> Any:
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"confirm": confirm} if action == "accept" and confirm is not None else None
        return types.ElicitResult(action=action, content=content)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


@pytest.fixture
async def campus(campus_factory: CampusFactory) -> CampusHarness:
    """A demo campus of its own, for a test that changes settings (seed 000's "apply": a legacy
    client changes at once; the confirmation has tests of its own)."""
    return await campus_factory(demo=True, confirmation_fallback="apply")


async def _rows(campus: CampusHarness) -> list[str]:
    """Every student's settings rows (levels, classes, notifications), to check a refusal wrote
    none: read from the tables, as a tool call per check would cost more than the test."""
    async with campus.sessions() as session:
        rows = []
        for model in (LevelSetting, ClassSetting, NotificationSetting):
            for row in await session.scalars(select(model)):
                rows.append(repr({column.key: getattr(row, column.key) for column in model.__table__.columns}))
    return sorted(rows)


async def _meeting(campus: CampusHarness) -> tuple[Any, int]:
    principal = await campus.student_principal("student1")
    async with campus.sessions() as session:
        meeting = await first_meeting_id(session, principal.user_id or 0)
    assert meeting is not None
    return principal, meeting


HOSTILE = [
    "{{title.__class__.__mro__}}",
    "{{ title|upper }}",
    "{{title:>99999}}",
    "{{course_code[0]}}",
    "{{__import__('os')}}",
    "{% for x in y %}{{x}}{% endfor %}",
    "{{ config }}",
    "{{title}}}}",
    "{{ {title} }}",
    "{0.__class__}{title!r}{{",
]


@pytest.mark.parametrize("template", HOSTILE)
async def test_a_hostile_template_is_refused_with_the_names_allowed(demo_campus: CampusHarness, template: str) -> None:
    campus = demo_campus
    principal, meeting = await _meeting(campus)
    before = await _rows(campus)
    for tool, arguments in (
        ("update_class_settings", {"meeting_time_id": meeting, "title_template": template}),
        ("preview_template", {"title_template": template}),
    ):
        result = await campus.call(tool, arguments, principal=principal)
        assert result.is_error, (tool, template)
        text = result.content[0].text  # type: ignore[union-attr]
        assert "{{course_code}}" in text and "Traceback" not in text
    async with campus.sessions() as session:
        row = await session.scalar(select(ClassSetting).where(ClassSetting.meeting_time_id == meeting))
    assert row is None or row.title_template != template
    assert await _rows(campus) == before


async def test_a_megabyte_template_is_refused_by_its_length(demo_campus: CampusHarness) -> None:
    campus = demo_campus
    principal, meeting = await _meeting(campus)
    before = await _rows(campus)
    result = await campus.call(
        "update_class_settings", {"meeting_time_id": meeting, "title_template": "x" * 1_000_000}, principal=principal
    )
    assert result.is_error
    assert "title_template" in result.content[0].text  # type: ignore[union-attr]
    assert await _rows(campus) == before


async def test_preview_renders_only_allowed_names_and_strips_control_characters(demo_campus: CampusHarness) -> None:
    campus = demo_campus
    principal, meeting = await _meeting(campus)
    before = await _rows(campus)
    result = await campus.call(
        "preview_template",
        {"meeting_time_id": meeting, "title_template": "{{ course_code }}\x1b[31m\u202e {crn} {{crn}}\nx"},
        principal=principal,
    )
    assert not result.is_error, result.content
    title = result.structured_content["preview"]["title"]  # type: ignore[index]
    crn = result.structured_content["meeting"]["crn"]  # type: ignore[index]
    code = result.structured_content["meeting"]["course_code"]  # type: ignore[index]
    assert title == f"{code}[31m {{crn}} {crn} x"
    assert await _rows(campus) == before


async def test_resolver_takes_each_field_from_its_own_level(campus: CampusHarness) -> None:
    principal, meeting = await _meeting(campus)
    result = await campus.call("my_calendar_settings", {}, principal=principal)
    classes = result.structured_content["classes"]  # type: ignore[index]
    (mine,) = [c for c in classes if c["meeting"]["meeting_time_id"] == meeting]
    # Demo: the class setting has the color and reminders, all classes the title template.
    assert mine["sources"]["color"] == "individual" and mine["resolved"]["color"] == "tomato"
    assert mine["sources"]["reminders"] == "individual" and mine["resolved"]["reminders"] == [10, 60]
    assert mine["sources"]["title_template"] == "global"
    assert mine["sources"]["visibility"] == "system_default"
    # Reset the color: the kind of class or the defaults apply again; an empty reminders list is set.
    result = await campus.call(
        "update_class_settings", {"meeting_time_id": meeting, "reset": ["color"], "reminders": []}, principal=principal
    )
    answer = result.structured_content
    assert answer["result"] == "updated"  # type: ignore[index]
    assert answer["sources"]["color"] in ("system_default", "event_type:laboratory", "event_type:lecture")  # type: ignore[index]
    assert answer["resolved"]["reminders"] == [] and answer["sources"]["reminders"] == "individual"  # type: ignore[index]
    result = await campus.call(
        "update_class_settings", {"meeting_time_id": meeting, "reset": ["reminders"]}, principal=principal
    )
    assert result.structured_content["result"] == "deleted"  # type: ignore[index]
    assert result.structured_content["class_settings"] is None  # type: ignore[index]


async def test_another_students_meeting_is_not_found(demo_campus: CampusHarness) -> None:
    campus = demo_campus
    _principal, meeting = await _meeting(campus)
    other = await campus.student_principal("student4")
    before = await _rows(campus)
    result = await campus.call("update_class_settings", {"meeting_time_id": meeting, "color": "sage"}, principal=other)
    own = await campus.call("update_class_settings", {"meeting_time_id": 987654, "color": "sage"}, principal=other)
    assert result.is_error and own.is_error
    assert result.content[0].text.replace(str(meeting), "N") == own.content[0].text.replace("987654", "N")  # type: ignore[union-attr]
    assert await _rows(campus) == before


async def test_the_question_lists_fields_old_and_new_with_the_template_last(campus: CampusHarness) -> None:
    principal, meeting = await _meeting(campus)
    callback = answering("accept")
    template = 'Lab "A"\n' + "y" * 150
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool(
            "update_class_settings",
            {"meeting_time_id": meeting, "color": 10, "reminders": [{"hours": 1.0}], "title_template": template},
        )
    assert not result.is_error, result.content
    (message,) = callback.asked
    lines = message.split("\n")
    assert lines[0].startswith("Change the calendar settings of one class meeting:")
    assert "- color: tomato (this class) -> basil (this class)" in lines
    assert "- reminders: 10 minutes before, 1 hour before (this class) -> 1 hour before (this class)" in lines
    # A title is one line: the newline became a space at save; the quotes are escaped.
    assert lines[-1].startswith(
        '- title template: "{{course_code}} {{type}} in {{room}}" (all classes) -> "Lab \\"A\\" y'
    )
    assert lines[-1].endswith('\u2026" (this class)') and len(lines[-1]) < 260
    assert any("final exam keep their settings" in line for line in lines)


async def test_a_level_change_says_who_keeps_their_own_settings(campus: CampusHarness) -> None:
    principal, _meeting_id = await _meeting(campus)
    callback = answering("decline")
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool("update_calendar_settings", {"level": "all_classes", "color": "grape"})
    (message,) = callback.asked
    assert "Change the calendar settings of all your classes (all_classes)." in message
    assert "A kind of class with settings of its own keeps them: laboratory." in message
    assert "1 class meeting with settings of its own keeps them." in message
    assert "- color: not set -> grape" in message
    assert result.structured_content["result"] == "unchanged"  # type: ignore[index]
    assert result.structured_content["not_changed"]["reason"] == "declined"  # type: ignore[index]
    after = await campus.call("my_calendar_settings", {}, principal=principal)
    (level,) = [lv for lv in after.structured_content["levels"] if lv["level"] == "all_classes"]  # type: ignore[index]
    assert level["settings"]["color"] is None


async def test_nothing_is_asked_when_nothing_changes(campus: CampusHarness) -> None:
    principal, _meeting_id = await _meeting(campus)
    callback = answering("accept")
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool("update_calendar_settings", {"level": "laboratory", "color": "basil"})
        paused = await client.call_tool("set_notifications", {"paused": False})
    assert callback.asked == []
    assert result.structured_content["result"] == "unchanged"  # type: ignore[index]
    assert paused.structured_content["result"] == "unchanged"  # type: ignore[index]


async def test_set_notifications_says_the_pause_and_the_current_state(campus: CampusHarness) -> None:
    principal, _meeting_id = await _meeting(campus)
    callback = answering("accept")
    async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=callback) as client:
        result = await client.call_tool("set_notifications", {"paused": True, "hours": 1.0})
        short = await client.call_tool("set_notifications", {"paused": True, "minutes": 0.5})
    # The question says the end on the campus's clock (issue 39), the end the answer gives.
    assert result.structured_content["paused"] is True  # type: ignore[index]
    end = result.structured_content["paused_until_text"]  # type: ignore[index]
    assert callback.asked == [
        f"Pause the reminders of every event in your calendar sync for 60 minutes, until {end}, also those of "
        "class settings.\nNow your reminders are on."
    ]
    assert short.is_error and "at least one minute" in short.content[0].text  # type: ignore[union-attr]


async def test_two_clients_changing_one_class_setting_at_once_both_land(campus: CampusHarness) -> None:
    principal, meeting = await _meeting(campus)
    changes = [
        {"color": "sage"},
        {"title_template": "{{crn}}"},
        {"visibility": "private"},
        {"reminders": [{"minutes": 5}]},
    ]
    results = await asyncio.gather(
        *(
            campus.call("update_class_settings", {"meeting_time_id": meeting, **change}, principal=principal)
            for change in changes
        )
    )
    assert not any(r.is_error for r in results), [r.content for r in results]
    async with campus.sessions() as session:
        row = await session.scalar(select(ClassSetting).where(ClassSetting.meeting_time_id == meeting))
    assert row is not None
    assert (row.color, row.title_template, row.visibility, row.reminders) == ("sage", "{{crn}}", "private", [5])
    assert row.version == 1 + len(changes)


async def test_my_calendar_settings_answers_what_the_student_has_and_the_rest_on_request(
    demo_campus: CampusHarness,
) -> None:
    """Issue 38, point 2: read before every settings change, so by default the levels and class
    meetings with settings of their own, within 3 KB; every level, the colors and the template
    variables when asked, and the answer says how to ask."""
    from campus_mcp.mcp.context_size import DEFAULT_ANSWER_GOALS, structured_bytes

    principal = await demo_campus.student_principal("student1")
    compact = await demo_campus.call("my_calendar_settings", {}, principal=principal)
    answer = compact.structured_content or {}
    assert structured_bytes(compact) <= DEFAULT_ANSWER_GOALS["my_calendar_settings"]
    # The demo student set all classes and labs; the other levels are left out, and so are the lists.
    assert [level["level"] for level in answer["levels"]] == ["all_classes", "laboratory"]
    assert all(level["settings"] is not None for level in answer["levels"])
    assert answer["colors"] == [] and answer["template_variables"] == []
    assert [c["preview"] for c in answer["classes"]] == [None]
    assert answer["left_out"] == "More with every_level, colors, template_variables: true."
    assert "laboratory" in answer["levels_allowed"]

    full = await demo_campus.call(
        "my_calendar_settings", {"every_level": True, "colors": True, "template_variables": True}, principal=principal
    )
    everything = full.structured_content or {}
    levels = [level["level"] for level in everything["levels"]]
    assert levels[0] == "all_classes" and "final_exam" in levels and "university_events" in levels
    assert {"name": "sage", "id": 2, "hex": "#33b679"} in everything["colors"]
    assert any(v["name"] == "course_code" for v in everything["template_variables"])
    assert everything["classes"][0]["preview"]["title"]
    assert everything["left_out"] is None
