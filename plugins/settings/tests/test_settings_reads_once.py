"""A confirmed change reads the student's state once for its question and its run (issue 25,
point 5: the plan hands what it read to the change): update_calendar_settings read its level
state three times, in three sessions."""

from __future__ import annotations

import re
from typing import Any

import mcp_types as types
from campus_mcp.testing import CampusFactory
from sqlalchemy import event

MODERN = "2026-07-28"
LEVEL_STATE = re.compile(r"\b(FROM|JOIN) settings_level_settings\b")


async def _accept(_context: Any, _params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": True})


async def test_a_confirmed_level_change_reads_the_level_state_for_the_plan_and_the_save_only(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(demo=True)
    principal = await campus.student_principal("student1")
    selects: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and LEVEL_STATE.search(statement):
            selects.append(statement)

    engine = campus.deployment.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        async with campus.mcp(principal=principal, mode=MODERN, elicitation_callback=_accept) as client:
            result = await client.call_tool("update_calendar_settings", {"level": "final_exam", "color": "tangerine"})
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["result"] in ("created", "updated")
    assert result.structured_content["settings"]["color"] == "tangerine"
    # The call runs twice on this wire (the question, then the answer): a plan each time (the
    # student's level rows with the count of class settings: one read). The save starts from the
    # plan's row (its version checked by the UPDATE) and answers the row as written: no read of its
    # own, none after (it was 6: two reads per plan, the save's read and the row read back; before
    # issue 25, 8).
    assert len(selects) == 2, selects
