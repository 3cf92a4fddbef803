"""Confirmation of every change (seed 000 "Confirmation"): what a write tool gives the host.

A write tool (``Operation(writes=True, plan=...)``) does not ask the model to ask: the host asks
the student in the client, through the multi round-trip form of MCP 2026-07-28. The plugin's part
is two functions over the same parsing as its save:

``plan(context, args) -> PlannedChange | None``
    What the change would do, without doing it. ``None``: nothing would change, so nobody is
    asked. Otherwise the exact text of the question (:class:`PlannedChange.message`) and the
    version of the record the change writes (``updated_at``, a counter, ``"none"`` when the row
    does not exist yet), so that an answer given for one version never applies to another.
    A change that cannot be saved raises :class:`~campus_mcp.InvalidInput` here: the student
    sees a tool error, not a question.

``run(context, args)``
    Reads the decision from ``context.confirmation`` (:data:`Decision`). On ``"accepted"`` (also
    a code the student agreed to in the chat: campus_mcp.mcp.confirmation_code), ``"not_asked"`` (the
    dashboard's REST twin, or a client that cannot be asked under ``confirmation_fallback = "apply"``) and
    ``"nothing_to_change"`` it saves; on ``"declined"`` / ``"cancelled"`` it changes nothing and
    answers the current values with ``result: "unchanged"`` and
    ``not_changed=not_changed(context.confirmation)``.

The helpers below build the parts of a message the way the seed wants them shown:
:func:`confirmation_template` (a template, last, on one line), :func:`format_number` and
:func:`plural` ("1 hour", "1.5 hours").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# What the run of a write tool is told (``ToolContext.confirmation``).
Decision = Literal["accepted", "declined", "cancelled", "not_asked", "nothing_to_change"]
# Seed 000: a state is good for 10 minutes (the SDK's RequestStateBoundary enforces it).
REQUEST_STATE_TTL_SECONDS = 600
# Seed 000 TEMPLATE_PREVIEW_LENGTH: a template cannot change the layout of the question.
TEMPLATE_PREVIEW_LENGTH = 120
# The key of the one input request, and the field of its form (seed 000).
CONFIRM_KEY = "confirm"
CONFIRM_TITLE = "Make this change"
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {CONFIRM_KEY: {"type": "boolean", "title": CONFIRM_TITLE}},
    "required": [CONFIRM_KEY],
}
# The frozen wire message the SDK's boundary gives a bad state; ours says the same.
INVALID_STATE_MESSAGE = "Invalid or expired requestState"


@dataclasses.dataclass(frozen=True)
class PlannedChange:
    """What a change would do: the question's exact text and the version of the record it writes.

    ``reading``: what the plan read to word the question, handed to the tool's run of the same
    call as ``context.planned.reading`` (a plugin's own object), so a confirmed change does not
    read the student's state again. It is as fresh as the plan: both run in the one call, and the
    change itself still writes with its own version check. Never part of the question."""

    message: str
    version: str
    reading: Any = dataclasses.field(default=None, compare=False, repr=False)
    # What the confirmation is bound to when the message has words that move with the clock (the
    # end of a pause counted from now, issue 39): an answer or a code given a minute ago is still
    # for this change. None: the whole message.
    bound_to: str | None = dataclasses.field(default=None, compare=False, repr=False)

    def message_digest(self) -> str:
        """The digest a requestState or a confirmation code keeps of the question."""
        return digest(self.message if self.bound_to is None else self.bound_to)


class NotChanged(BaseModel):
    """Why a write tool changed nothing: the student declined or cancelled the question."""

    model_config = ConfigDict(extra="forbid")

    reason: Literal["declined", "cancelled", "confirm_on_page"] = Field(
        description=(
            "declined: the student said no; cancelled: the question was dismissed; confirm_on_page: the "
            "change waits for the student's Confirm on the campus's page (the message has the link)."
        )
    )
    message: str = Field(description="Tell the student this.")


_NOT_CHANGED_TEXT = {
    "declined": "The student did not confirm the change, so nothing changed. Do not retry unless they ask again.",
    "cancelled": "The confirmation was dismissed, so nothing changed. Ask the student whether they still want it.",
}


def not_changed(reason: str) -> NotChanged:
    """The ``not_changed`` part of a write tool's answer for ``context.confirmation``.

    Give a run's decision as it is: ``"declined"`` and ``"cancelled"`` name themselves; anything
    else is treated as a cancel (a run should only call this when nothing changed).
    """
    kind: Literal["declined", "cancelled"] = "declined" if reason == "declined" else "cancelled"
    return NotChanged(reason=kind, message=_NOT_CHANGED_TEXT[kind])


def confirmation_template(text: str, limit: int = TEMPLATE_PREVIEW_LENGTH) -> str:
    """A template as the question shows it: quoted, on one line, cut after ``limit`` characters.

    Newlines, tabs, backslashes and quotes are shown as escapes, so a template cannot add lines
    to the question or close its quotes; a longer one ends with an ellipsis.
    """
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    # json.dumps keeps U+2028/U+2029 raw, and a client shows them as line breaks.
    escaped = escaped.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if len(escaped) > limit:
        escaped = escaped[:limit].rstrip("\\") + "\u2026"
    return f'"{escaped}"'


def format_number(value: float) -> str:
    """A number as the student reads it: 1.0 -> "1", 1.5 -> "1.5", 0.25 -> "0.25"."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def plural(value: float, unit: str, plural_unit: str | None = None) -> str:
    """``value`` with its unit, singular for exactly one: "1 hour", "2 hours", "1.5 hours"."""
    word = unit if float(value) == 1 else (plural_unit or f"{unit}s")
    return f"{format_number(value)} {word}"


def digest(text: str) -> str:
    """A short digest of a message, kept in the sealed state instead of the message itself."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
