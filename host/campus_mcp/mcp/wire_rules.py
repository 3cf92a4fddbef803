"""Seed 000's own rules for what goes over the MCP wire where the SDK's defaults differ.

Two SDK middlewares (``Server.middleware``), so every request the SDK serves passes them; the short
way of :mod:`campus_mcp.fast_call` answers only read-only ``tools/call``, which neither concerns.

- :class:`CacheHintsOnEveryWire`: the SDK writes ``ttlMs``/``cacheScope`` only on the 2026-07-28
  wire (its per-version sieve drops them from an older wire's result). Seed 000 "Cache hints": "A
  client on a protocol version before 2026-07-28 also gets the two fields in the list results. A
  client ignores result fields it does not know."
- :class:`LenientAnswers`: parts of a request the seed reads leniently are made well-formed before
  the SDK validates them, which would answer -32602. Seed 000 "Completions": "A ``context`` or
  ``context.arguments`` that is not an object gives no context, not an error." Seed 000
  "Confirmation": "An answer or a state that is not a JSON object counts as a cancel or as no
  state. It does not cause an error." (an ``inputResponses`` that is no object is no answer, and
  no answer is a cancel: :func:`campus_mcp.mcp.confirmation_state.decision_of`).
- :class:`ExtensionsOnEveryWire`: the SDK advertises ``capabilities.extensions`` only on the
  2026-07-28 wire (``ServerCapabilities.extensions`` is sieved from an older ``initialize``), so a
  2025 client never learned the MCP Apps extension was there (issue 37, point 9). The 2025
  ``initialize`` result gets the same ``extensions``; a client ignores a capability it does not know.
- :class:`NamedPromptArguments`: a ``prompts/get`` whose arguments are not an object of strings
  gets a -32602 that names the argument and what it must be (issue 37, point 9); the SDK's own
  validation would answer "Invalid request parameters" and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from campus_mcp.plugin.errors import quote_input

# The results the seed calls "the list results".
LIST_METHODS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})


class CacheHintsOnEveryWire:
    """The cache hints on an older wire's list results too (the 2026-07-28 wire has them already)."""

    def __init__(self, hint: CacheHint) -> None:
        self.hint = hint

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method not in LIST_METHODS or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return result
        if isinstance(result, dict) and "ttlMs" not in result:
            return {**result, "ttlMs": self.hint.ttl_ms, "cacheScope": self.hint.scope}
        return result


def _completion_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """No context for a context that is not an object; only its string arguments as context."""
    fixed = dict(params)
    context = fixed.get("context")
    if context is None:
        return fixed
    if not isinstance(context, Mapping):
        del fixed["context"]
        return fixed
    arguments = context.get("arguments")
    if arguments is None:
        return fixed
    fixed["context"] = {
        **context,
        "arguments": {str(k): v for k, v in arguments.items() if isinstance(v, str)}
        if isinstance(arguments, Mapping)
        else {},
    }
    return fixed


def _call_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """An ``inputResponses`` that is not an object is no answer; an answer that is not one, dropped."""
    fixed = dict(params)
    responses = fixed.get("inputResponses")
    if responses is None:
        return fixed
    if not isinstance(responses, Mapping):
        fixed["inputResponses"] = {}
    else:
        fixed["inputResponses"] = {k: v for k, v in responses.items() if isinstance(v, Mapping)}
    return fixed


class LenientAnswers:
    """``completion/complete``'s context and ``tools/call``'s answers read as the seed reads them."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if isinstance(params, Mapping):
            if ctx.method == "completion/complete":
                ctx = replace(ctx, params=_completion_params(params))
            elif ctx.method == "tools/call":
                ctx = replace(ctx, params=_call_params(params))
        return await call_next(ctx)


class ExtensionsOnEveryWire:
    """The server's extensions (``io.modelcontextprotocol/ui``) in a 2025 ``initialize`` result too."""

    def __init__(self, extensions: Mapping[str, dict[str, Any]]) -> None:
        self.extensions = dict(extensions)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "initialize" or not self.extensions or not isinstance(result, dict):
            return result
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict) and "extensions" not in capabilities:
            return {**result, "capabilities": {**capabilities, "extensions": self.extensions}}
        return result


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "an array" if isinstance(value, list) else "an object"


class NamedPromptArguments:
    """``prompts/get`` arguments that are not an object of strings, refused by name."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method == "prompts/get" and isinstance(params, Mapping):
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, Mapping):
                raise MCPError(
                    INVALID_PARAMS,
                    f"Prompt arguments must be an object of argument names and strings, not {_kind(arguments)}; "
                    "prompts/list gives each prompt's arguments.",
                )
            if isinstance(arguments, Mapping):
                bad = sorted((str(name), value) for name, value in arguments.items() if not isinstance(value, str))
                if bad:
                    # The names come from the client: quoted and cut, never more than a few.
                    names = ", ".join(quote_input(name, 60) for name, _value in bad[:5])
                    raise MCPError(
                        INVALID_PARAMS,
                        f"Prompt argument {names} must be text (a string), not {_kind(bad[0][1])}: give it as a "
                        'string, such as "Spring 2027", or leave it out.',
                    )
        return await call_next(ctx)
