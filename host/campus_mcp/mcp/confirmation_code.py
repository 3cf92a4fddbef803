"""Confirmation in the chat, for a client that cannot ask the student (issue 28, point 1).

A client that cannot show the 2026-07-28 form (every HTTP client on an older wire, a stdio client
without elicitation) would otherwise change a student's record without a question. With the
deployment's ``confirmation_fallback`` at ``in_band`` (the default) the first call changes nothing:
it answers the question the form would show and a one-time code, and tells the model to show the
student the question and call again with ``confirmation`` set to the code only after the student
agreed in the chat.

The code is sealed like ``requestState`` (AES-256-GCM, the SDK's codec) under a key derived from
the seal key for this use only, so neither can stand for the other. Inside: the tool, the student,
a digest of the arguments, a digest of the question, the record's version, an expiry 10 minutes on
and a nonce. A code is refused, with words saying what to do, for another tool, student or
arguments, after the record changed, after 10 minutes, and once used: its nonce is written down
where answered ``requestState`` nonces are (campus_mcp.mcp.confirmation_state).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from typing import Any, Literal

from mcp.server.request_state import AESGCMRequestStateCodec, InvalidRequestState
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.db import utcnow
from campus_mcp.mcp.answered_states import AnsweredRequestState
from campus_mcp.mcp.confirmation_state import still_current
from campus_mcp.plugin.confirmation import REQUEST_STATE_TTL_SECONDS, PlannedChange
from campus_mcp.plugin.errors import InvalidInput

# What a write tool does for a client that cannot ask (Settings.confirmation_fallback).
Fallback = Literal["page", "in_band", "apply", "refuse"]
FIELD = "confirmation"
CODE_LIMIT = 1000
CODE_VERSION = 1
CODE_KIND = "campus-confirmation"
# Answered codes share the table of answered requestStates; the prefix keeps the two apart.
NONCE_PREFIX = "code:"
_KEY_LABEL = b"campus-mcp/confirmation-code/v1"

SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": CODE_LIMIT,
    "description": "The first call's code, once the student agreed.",
}


class CodeRefused(InvalidInput):
    """A confirmation code that cannot make this change; the message says what to do instead."""


def _refused(tool: str, why: str) -> CodeRefused:
    return CodeRefused(
        f"{why} Nothing was changed. Call {tool} again with the student's arguments and without "
        f"{FIELD} to get the current question and a new code, show the student that question, and call "
        "once more with the new code only if they agree in the chat."
    )


def _codec(seal_key: bytes) -> AESGCMRequestStateCodec:
    # Derived, not the seal key itself: a sealed requestState is never a valid code, nor the reverse.
    return AESGCMRequestStateCodec([hmac.new(seal_key, _KEY_LABEL, hashlib.sha256).digest()])


def split_code(arguments: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The confirmation code of a call and the other arguments, or InvalidInput for a bad value."""
    rest = dict(arguments)
    code = rest.pop(FIELD, None)
    if code is None:
        return None, rest
    if not isinstance(code, str) or not code.strip() or len(code) > CODE_LIMIT:
        raise InvalidInput(
            f"{FIELD} must be the code a previous call of this tool answered (a string); leave it out on a first call."
        )
    return code.strip(), rest


def new_code(seal_key: bytes, tool: str, owner: str, arguments_digest: str, plan: PlannedChange) -> str:
    payload = {
        "kind": CODE_KIND,
        "v": CODE_VERSION,
        "tool": tool,
        "owner": owner,
        "args": arguments_digest,
        "message": plan.message_digest(),
        "version": plan.version,
        "exp": int(time.time()) + REQUEST_STATE_TTL_SECONDS,
        "nonce": secrets.token_hex(16),
    }
    return _codec(seal_key).seal(json.dumps(payload, separators=(",", ":")).encode())


def read_code(seal_key: bytes, code: str, tool: str, owner: str, arguments_digest: str) -> dict[str, Any]:
    """The code's contents when it was made for this tool, student and arguments and is in time."""
    try:
        payload = json.loads(_codec(seal_key).unseal(code))
    except (InvalidRequestState, ValueError):
        raise _refused(tool, f"This {FIELD} is not a code this server gave (copy it exactly as answered).") from None
    if not isinstance(payload, dict) or payload.get("kind") != CODE_KIND or payload.get("v") != CODE_VERSION:
        raise _refused(tool, f"This {FIELD} is not a code this server gave.")
    if payload.get("tool") != tool:
        raise _refused(tool, f"This code confirms a change of {payload.get('tool')}, not of {tool}.")
    if payload.get("owner") != owner:
        raise _refused(tool, "This code was given to another student; it cannot confirm a change of yours.")
    if not isinstance(payload.get("exp"), int) or payload["exp"] < time.time():
        minutes = REQUEST_STATE_TTL_SECONDS // 60
        raise _refused(tool, f"This code expired (a code is good for {minutes} minutes).")
    if payload.get("args") != arguments_digest:
        raise _refused(tool, "This code was given for other arguments; it confirms only the change the student saw.")
    if not isinstance(payload.get("nonce"), str):
        raise _refused(tool, f"This {FIELD} is not a code this server gave.")
    return payload


async def check_unused(sessions: async_sessionmaker[AsyncSession], tool: str, payload: dict[str, Any]) -> None:
    """Refuses a code already used, before the record's version is compared (its own change moved it)."""
    async with sessions() as session:
        found = await session.scalar(
            select(AnsweredRequestState.nonce).where(AnsweredRequestState.nonce == NONCE_PREFIX + payload["nonce"])
        )
    if found is not None:
        raise _used(tool)


def check_current(tool: str, payload: dict[str, Any], plan: PlannedChange | None) -> None:
    """Refuses a code for a question that is not the one the change would ask now."""
    if plan is not None and not still_current(payload, plan):
        raise _refused(
            tool, "The student's record changed since this code was given, so the question they saw is out of date."
        )


async def use_once(sessions: async_sessionmaker[AsyncSession], tool: str, payload: dict[str, Any]) -> None:
    """Write the code down as used; a second use, also one racing this one, is refused."""
    async with sessions() as session:
        # Kept twice a code's life, as answered requestStates are (confirmation_state.prune_job).
        session.add(AnsweredRequestState(nonce=NONCE_PREFIX + payload["nonce"], answered_at=utcnow()))
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
            raise _used(tool) from None


def _used(tool: str) -> CodeRefused:
    return CodeRefused(
        f"This confirmation code was already used: the change it confirmed was made once and is not made "
        f"again. Do not call {tool} again with it. If the student wants another change, call {tool} without "
        f"{FIELD} to get a new question."
    )


def ask_in_chat(tool: str, plan: PlannedChange, code: str, *, no_page: bool = False) -> str:
    """The first call's answer: the question the form would show, the code and what to do with them.
    ``no_page``: the campus would send the student to its confirmation page, but this stdio server
    has no public URL to link to, so the answer says the confirmation is in the chat instead."""
    minutes = REQUEST_STATE_TTL_SECONDS // 60
    why = (
        " (this campus confirms changes on its own page, but this server has no public URL configured, so "
        "the confirmation is in the chat)"
        if no_page
        else ""
    )
    return (
        f"Nothing was changed yet: {tool} needs the student's confirmation, and this client cannot ask them "
        f"itself{why}. Show the student this question exactly as written:\n\n"
        f"{plan.message}\n\n"
        f"Only if the student agrees in the chat, call {tool} again with the same arguments and "
        f'"{FIELD}": "{code}". If they do not agree, do not call it again. The code works once, for these '
        f"arguments and this student, for {minutes} minutes."
    )


def refuse_unasked(tool: str) -> str:
    """The answer under ``confirmation_fallback = "refuse"``."""
    return (
        f"Nothing was changed: {tool} changes the student's data only after the student confirms it, and this "
        "client cannot ask them (this campus does not accept a confirmation in the chat). Tell the student to "
        "make the change on the campus dashboard, or in an app that can show a confirmation (MCP form "
        "elicitation)."
    )
