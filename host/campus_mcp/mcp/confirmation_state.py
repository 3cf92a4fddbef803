"""The host's side of a confirmation: the state it hands the client, and what the answer means.

The SDK's ``RequestStateBoundary`` (installed in mcp_server.py with the settings' seal key, the
same on every worker) seals what :func:`new_state` returns with AES-GCM and binds it to
``tools/call``, the tool, a digest of the arguments, the SDK's view of the caller and a 10-minute
expiry; a state that fails any of these never reaches us (-32602). Inside, we keep what the seal
cannot know: the student, a digest of the question and the record's version. A state is answered
once: its nonce is written down when the answer is used, so the same state and answer cannot
make the change twice (also when the change put the record back to its old version).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.db import utcnow
from campus_mcp.mcp import confirmation_page
from campus_mcp.mcp.answered_states import AnsweredRequestState
from campus_mcp.plugin.confirmation import (
    CONFIRM_KEY,
    CONFIRM_SCHEMA,
    INVALID_STATE_MESSAGE,
    Decision,
    PlannedChange,
)

STATE_VERSION = 1


def invalid_state() -> MCPError:
    # The SDK's frozen wire error for a bad state: a client error, so it is not logged as ours.
    return MCPError(types.INVALID_PARAMS, INVALID_STATE_MESSAGE, data={"reason": "invalid_request_state"})


def new_state(tool: str, owner: str, plan: PlannedChange) -> str:
    return json.dumps(
        {
            "v": STATE_VERSION,
            "tool": tool,
            "owner": owner,
            "message": plan.message_digest(),
            "version": plan.version,
            "nonce": secrets.token_hex(16),
        },
        separators=(",", ":"),
    )


def question(tool: str, owner: str, plan: PlannedChange) -> types.InputRequiredResult:
    """The first round: one form elicitation under ``confirm`` and the (to be sealed) state."""
    return types.InputRequiredResult(
        input_requests={
            CONFIRM_KEY: types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=plan.message, requested_schema=CONFIRM_SCHEMA)  # type: ignore[arg-type]
            )
        },
        request_state=new_state(tool, owner, plan),
    )


def page_question(tool: str, owner: str, plan: PlannedChange, url: str, pending_id: str) -> types.InputRequiredResult:
    """The first round for a client that opens pages: one URL-mode elicitation of the confirmation
    page under ``confirm``, the page's id in the state. The client's answer only says it showed
    the page; the retry reads the page's outcome from the database (campus_mcp.mcp.confirmation_page)."""
    state = json.loads(new_state(tool, owner, plan))
    state["page"] = pending_id
    return types.InputRequiredResult(
        input_requests={
            CONFIRM_KEY: types.ElicitRequest(
                params=types.ElicitRequestURLParams(message=confirmation_page.url_message(plan), url=url)
            )
        },
        request_state=json.dumps(state, separators=(",", ":")),
    )


def read_state(raw: str, tool: str, owner: str) -> dict[str, Any] | None:
    """The state the boundary unsealed, checked against this call; None: not a JSON object (seed 000:
    counts as no state). A state of another tool or student is refused with -32602."""
    try:
        state = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(state, dict):
        return None
    if state.get("v") != STATE_VERSION or state.get("tool") != tool or state.get("owner") != owner:
        raise invalid_state()
    if not isinstance(state.get("nonce"), str) or not isinstance(state.get("message"), str):
        raise invalid_state()
    return state


def still_current(state: dict[str, Any], plan: PlannedChange) -> bool:
    """True when the question the student answered is the one the change would ask now."""
    return state.get("message") == plan.message_digest() and state.get("version") == plan.version


def decision_of(responses: Any) -> Decision:
    """What the student answered; anything but a ticked box under "accept" changes nothing.
    An answer that is missing or not an elicitation result counts as a cancel (seed 000)."""
    answer = responses.get(CONFIRM_KEY) if isinstance(responses, dict) else None
    action = getattr(answer, "action", None)
    if not isinstance(answer, types.ElicitResult) or action == "cancel":
        return "cancelled"
    if action == "accept" and isinstance(answer.content, dict) and answer.content.get(CONFIRM_KEY) is True:
        return "accepted"
    return "declined"


async def mark_answered(sessions: async_sessionmaker[AsyncSession], nonce: str) -> None:
    """Use a state's answer once; a second use (a replay) is refused with -32602. One statement:
    the old nonces go in the job of :func:`prune_job`, not in the answer's time."""
    async with sessions() as session:
        session.add(AnsweredRequestState(nonce=nonce, answered_at=utcnow()))
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
            raise invalid_state() from None
