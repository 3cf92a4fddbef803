"""One ``tools/call`` of a write tool: idempotency key, confirmation, then the change.

In order (seed 000 "Confirmation", seed 003):

1. The ``idempotency_key`` is taken out of the arguments; the rest is validated against the
   tool's input model and the scope is checked, on every round (a retry runs it all again).
2. A key already used with the same arguments answers the kept answer: nothing runs, nobody is
   asked. With other arguments it is refused.
3. The plugin's ``plan`` says what would change. Nothing: the run is told ``nothing_to_change``.
4. A client on the 2026-07-28 wire that declares form elicitation in the request ``_meta`` is
   asked: the first round answers ``input_required``; the retry brings the answer and the sealed
   state. A state for an old question (the record or the message changed) is asked again; a state
   answered before is refused (-32602). Any other client is not asked (``not_asked``): it cannot be
   on a stateless wire. On stdio a 2025 client that declared elicitation is asked over the back
   channel (``elicitation/create`` while the call waits): :data:`back_channel`, set by
   ``campus_mcp.cli.stdio``. Any other client gets what ``confirmation_fallback`` says: ``in_band``
   (the default) answers the question and a one-time code and changes nothing; ``apply`` changes
   without a question (seed 000's ``not_asked``); ``refuse`` changes nothing
   (campus_mcp.mcp.confirmation_code).
5. A call that brings a ``confirmation`` code (the second call of ``in_band``) makes the change
   when the code is this tool's, student's and arguments', in time, unused, and for the record as
   it is now; otherwise it is refused with words saying what to do.
6. The run gets the decision in ``context.confirmation``; only a change that ran keeps its key.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from campus_mcp.assembly.access import check_call
from campus_mcp.assembly.registry import Registry
from campus_mcp.mcp import confirmation_code, confirmation_state, idempotency
from campus_mcp.plugin.confirmation import CONFIRM_KEY, Decision
from campus_mcp.plugin.contributions import Tool
from campus_mcp.plugin.tool_context import ToolContext

# Multi round-trip results (input_required) exist from this protocol version on.
ASKS_SINCE = "2026-07-28"

Validate = Callable[[Tool, Mapping[str, Any]], BaseModel]
Finish = Callable[[Tool, ToolContext, Any], Awaitable[tuple[dict[str, Any], Any]]]
# Asks the student the question over a connection's back channel; the answer is an ElicitResult.
AskBack = Callable[[str], Awaitable[types.ElicitResult]]
# Set for one request by a transport with a back channel to a client that can be asked (stdio):
# stateless HTTP has none, so there it stays None.
back_channel: contextvars.ContextVar[AskBack | None] = contextvars.ContextVar("campus_mcp_back_channel", default=None)


@dataclasses.dataclass(frozen=True)
class WriteAnswer:
    """What a write call came to: a question to send, or an answer and the decision it ran with."""

    question: types.InputRequiredResult | None = None
    result: dict[str, Any] | None = None
    links: Any = ()
    decision: Decision | None = None
    replayed: bool = False
    # Nothing changed, for a client that cannot ask: the question and code to show in the chat
    # (confirmation_requested), or the refusal of confirmation_fallback = "refuse".
    in_chat: str | None = None
    refused: str | None = None
    # The change was confirmed by a code from the chat (confirmed_in_band).
    confirmed_in_band: bool = False


def client_can_be_asked(context: ToolContext) -> bool:
    """The request came on the 2026-07-28 wire and its ``_meta`` declares form elicitation."""
    if not context.protocol_version or context.protocol_version < ASKS_SINCE:
        return False
    capabilities = context.request_meta.get(types.CLIENT_CAPABILITIES_META_KEY)
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return False
    # An empty elicitation capability means form mode (the spec's backward-compatible reading).
    return "form" in elicitation or "url" not in elicitation


async def call_write_tool(
    tool: Tool,
    params: types.CallToolRequestParams,
    context: ToolContext,
    *,
    registry: Registry,
    validate: Validate,
    finish: Finish,
) -> WriteAnswer:
    assert tool.plan is not None  # Tool refuses a write tool without a plan
    key, with_code = idempotency.split_key(params.arguments or {})
    code, arguments = confirmation_code.split_code(with_code)
    args = validate(tool, arguments)
    check_call(registry, context.principal, tool)
    owner = idempotency.owner_of(context.principal)
    # Without the key and the code: a retry with the code replays the change its key kept.
    digest = idempotency.arguments_digest(arguments)
    if key is not None:
        kept = await idempotency.kept_answer(context.sessions, owner, tool.name, key, digest)
        if kept is not None:
            return WriteAnswer(result=kept, replayed=True)

    state = None
    if params.request_state is not None:
        state = confirmation_state.read_state(params.request_state, tool.name, owner)
    if state is not None:
        # Used up now, whatever comes next: a replay is refused even when the change it made
        # moved the record on (which would ask again) or left nothing to change.
        await confirmation_state.mark_answered(context.sessions, state["nonce"])

    decision: Decision
    plan = await tool.plan(context, args)
    in_band = False
    if code is not None:
        # The student agreed in the chat to the question a first call answered (any client).
        seal_key = context.settings.seal_key()
        payload = confirmation_code.read_code(seal_key, code, tool.name, owner, digest)
        await confirmation_code.check_unused(context.sessions, tool.name, payload)
        confirmation_code.check_current(tool.name, payload, plan)
        await confirmation_code.use_once(context.sessions, tool.name, payload)
        decision, in_band = ("nothing_to_change", False) if plan is None else ("accepted", True)
    elif plan is None:
        decision = "nothing_to_change"
    elif not client_can_be_asked(context):
        ask = back_channel.get()
        fallback = context.settings.confirmation_fallback
        if ask is not None:
            # The same form, the same reading of the answer as the in-band question's.
            decision = confirmation_state.decision_of({CONFIRM_KEY: await ask(plan.message)})
        elif fallback == "apply":
            decision = "not_asked"
        elif fallback == "refuse":
            return WriteAnswer(refused=confirmation_code.refuse_unasked(tool.name))
        else:
            made = confirmation_code.new_code(context.settings.seal_key(), tool.name, owner, digest, plan)
            return WriteAnswer(in_chat=confirmation_code.ask_in_chat(tool.name, plan, made))
    else:
        if state is None or not confirmation_state.still_current(state, plan):
            return WriteAnswer(question=confirmation_state.question(tool.name, owner, plan))
        decision = confirmation_state.decision_of(params.input_responses)

    changes = decision in ("accepted", "not_asked", "nothing_to_change")
    if key is not None and changes:
        kept = await idempotency.reserve(context.sessions, owner, tool.name, key, digest)
        if kept is not None:
            return WriteAnswer(result=kept, replayed=True)
    context = dataclasses.replace(context, confirmation=decision, planned=plan)
    try:
        raw = await tool.handler(context, args)
        result, links = await finish(tool, context, raw)
    except Exception:
        if key is not None and changes:
            await idempotency.release(context.sessions, owner, tool.name, key)
        raise
    if key is not None and changes:
        await idempotency.keep(context.sessions, owner, tool.name, key, result)
    return WriteAnswer(result=result, links=links, decision=decision, confirmed_in_band=in_band)
