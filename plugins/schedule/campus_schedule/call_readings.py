"""What a tool call's run read that the same call's page links need again, kept for that call only.

A tool's answer and its page links are two hooks of one call (``Operation.run`` and
``Operation.page_links``), and the host hands both the same ``ToolContext``. The links of
``my_courses`` need the student's terms, which the run has just read, and the friends' links need
whether the student has courses (the onboarded rule), which the friends' runs read with their own
statement: read again by the links hook, that was one more statement in every such call, the whole
difference between MCP's CPU per answer and its REST twin's, which has no links.

So a run keeps what it read here, under its context object, and the links hook of the same call takes
it; the entry goes when the context is collected (``weakref.finalize``). A hook handed another
context object (a write tool's run gets a copy) finds nothing and reads for itself: the same answer,
one statement more.
"""

from __future__ import annotations

import weakref
from typing import Generic, TypeVar

Value = TypeVar("Value")


class CallReadings(Generic[Value]):
    """One kind of reading, by call (its context object)."""

    def __init__(self) -> None:
        self._kept: dict[int, Value] = {}

    def keep(self, context: object, value: Value) -> None:
        key = id(context)
        if key not in self._kept:
            # The id is the context's only while it lives: the entry goes with it.
            weakref.finalize(context, self._kept.pop, key, None)
        self._kept[key] = value

    def of(self, context: object) -> Value | None:
        return self._kept.get(id(context))
