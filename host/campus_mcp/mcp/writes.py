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
from campus_mcp.base.settings import Settings
from campus_mcp.mcp import confirmation_code, confirmation_page, confirmation_state, idempotency
from campus_mcp.plugin.confirmation import CONFIRM_KEY, Decision, NotChanged
from campus_mcp.plugin.contributions import Tool
from campus_mcp.plugin.tool_context import ToolContext

# Multi round-trip results (input_required) exist from this protocol version on.
ASKS_SINCE = "2026-07-28"

Validate = Callable[[Tool, Mapping[str, Any]], BaseModel]
Finish = Callable[[Tool, ToolContext, Any], Awaitable[tuple[dict[str, Any], Any]]]
# Asks the student the question over a connection's back channel; the answer is an ElicitResult.
AskBack = Callable[[str], Awaitable[types.ElicitResult]]
# Sends the student to a page over the back channel (URL-mode elicitation): message, url, id.
SendToPage = Callable[[str, str, str], Awaitable[types.ElicitResult]]


@dataclasses.dataclass(frozen=True)
class BackChannel:
    """What a connection with a back channel (stdio) can do: ask with a form, send to a page (URL
    mode), both, or neither (a client that declared no elicitation)."""

    form: AskBack | None = None
    url: SendToPage | None = None


# Set for one request by a transport with a back channel (stdio): stateless HTTP has none, so
# there it stays None.
back_channel: contextvars.ContextVar[BackChannel | None] = contextvars.ContextVar(
    "campus_mcp_back_channel", default=None
)


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
    # Nothing changed yet: the change waits on the confirmation page (confirmation_page).
    on_page: bool = False


def _declared_elicitation(context: ToolContext) -> dict[str, Any] | None:
    """The elicitation capability a 2026-07-28 request declares in its ``_meta``, or None."""
    if not context.protocol_version or context.protocol_version < ASKS_SINCE:
        return None
    capabilities = context.request_meta.get(types.CLIENT_CAPABILITIES_META_KEY)
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return elicitation if isinstance(elicitation, dict) else None


def client_can_be_asked(context: ToolContext) -> bool:
    """The request came on the 2026-07-28 wire and its ``_meta`` declares form elicitation."""
    elicitation = _declared_elicitation(context)
    # An empty elicitation capability means form mode (the spec's backward-compatible reading).
    return elicitation is not None and ("form" in elicitation or "url" not in elicitation)


def client_opens_pages(context: ToolContext) -> bool:
    """The request came on the 2026-07-28 wire and its ``_meta`` declares URL-mode elicitation and
    not the form. A client that declares both keeps the form it was asked with before (the SDK's
    client declares both whenever it has an elicitation callback)."""
    elicitation = _declared_elicitation(context)
    return elicitation is not None and "url" in elicitation and "form" not in elicitation


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
    channel = back_channel.get()
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
    elif client_opens_pages(context) and context.principal.user_id is not None:
        # The page asks, through URL-mode elicitation: what the client answers confirms nothing.
        page_state = state.get("page") if state is not None else None
        row = await confirmation_page.find(context.sessions, page_state) if isinstance(page_state, str) else None
        if row is None or row.student_id != context.principal.user_id or not confirmation_page.matches(row, plan):
            made = await confirmation_page.create(
                context.sessions, context.principal.user_id, tool.name, args.model_dump(mode="json"), plan
            )
            url = confirmation_page.page_url(context.settings.base_url, made.id)
            return WriteAnswer(question=confirmation_state.page_question(tool.name, owner, plan, url, made.id))
        if row.state == "cancelled":
            decision = "declined"
        else:
            url = confirmation_page.page_url(context.settings.base_url, row.id)
            return await _waiting(tool, context, args, confirmation_page.asked_by_url(tool.name, url), finish)
    elif client_can_be_asked(context):
        if state is None or not confirmation_state.still_current(state, plan):
            return WriteAnswer(question=confirmation_state.question(tool.name, owner, plan))
        decision = confirmation_state.decision_of(params.input_responses)
    elif channel is not None and channel.url is not None and _page_reachable(context, channel):
        # stdio: the page through the client's URL-mode elicitation (elicitation/create, mode url).
        return await _send_to_page(tool, context, args, plan, channel.url, finish)
    elif channel is not None and channel.form is not None:
        # The same form, the same reading of the answer as the in-band question's.
        decision = confirmation_state.decision_of({CONFIRM_KEY: await channel.form(plan.message)})
    else:
        fallback = context.settings.confirmation_fallback
        if fallback == "apply":
            decision = "not_asked"
        elif fallback == "refuse":
            return WriteAnswer(refused=confirmation_code.refuse_unasked(tool.name))
        elif fallback == "page" and context.principal.user_id is not None and _page_reachable(context, channel):
            made = await confirmation_page.create(
                context.sessions, context.principal.user_id, tool.name, args.model_dump(mode="json"), plan
            )
            url = confirmation_page.page_url(context.settings.base_url, made.id)
            return await _waiting(tool, context, args, confirmation_page.ask_on_page(tool.name, plan, url), finish)
        else:
            made_code = confirmation_code.new_code(context.settings.seal_key(), tool.name, owner, digest, plan)
            # On stdio without a public URL there is no page the student could open: the code, and why.
            why = fallback == "page"
            return WriteAnswer(in_chat=confirmation_code.ask_in_chat(tool.name, plan, made_code, no_page=why))

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


def _page_reachable(context: ToolContext, channel: BackChannel | None) -> bool:
    """Over HTTP the page is on the server the client reached; on stdio only when the campus's
    public URL is set (the process itself serves no page)."""
    return channel is None or bool(context.settings.public_url)


def chat_fallback(settings: Settings, *, stdio: bool) -> str:
    """``confirmation_fallback`` as it works on a door: ``page`` on stdio without a public URL is the
    code in the chat (the tool's description and schema say so)."""
    if settings.confirmation_fallback == "page" and stdio and not settings.public_url:
        return "in_band"
    return settings.confirmation_fallback


async def _waiting(tool: Tool, context: ToolContext, args: Any, words: str, finish: Finish) -> WriteAnswer:
    """Nothing changed yet: the tool's own answer of its current values, as for a cancel (every
    plugin changes nothing then), with the page's question and link as its ``not_changed``. Not
    a tool error: some clients show an error as a failure. A tool whose answer has no
    ``not_changed`` gets the words alone."""
    context = dataclasses.replace(context, confirmation="cancelled")
    raw = await tool.handler(context, args)
    result, links = await finish(tool, context, raw)
    if "not_changed" not in result:
        return WriteAnswer(in_chat=words, on_page=True)
    result["not_changed"] = NotChanged(reason="confirm_on_page", message=words).model_dump(mode="json")
    return WriteAnswer(result=result, links=links, decision="cancelled", on_page=True)


async def _send_to_page(
    tool: Tool, context: ToolContext, args: Any, plan: Any, send: SendToPage, finish: Finish
) -> WriteAnswer:
    """stdio with URL-mode elicitation: the client opens the page; only the page's Confirm changes."""
    assert context.principal.user_id is not None
    made = await confirmation_page.create(
        context.sessions, context.principal.user_id, tool.name, args.model_dump(mode="json"), plan
    )
    url = confirmation_page.page_url(context.settings.base_url, made.id)
    await send(confirmation_page.url_message(plan), url, made.id)
    assert tool.plan is not None
    if await tool.plan(context, args) is None:
        # Confirmed on the page while the client waited: the answer is the change made.
        context = dataclasses.replace(context, confirmation="nothing_to_change")
        raw = await tool.handler(context, args)
        result, links = await finish(tool, context, raw)
        return WriteAnswer(result=result, links=links, decision="nothing_to_change")
    return await _waiting(tool, context, args, confirmation_page.asked_by_url(tool.name, url), finish)
