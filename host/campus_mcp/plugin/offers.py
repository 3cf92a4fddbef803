"""Offer only what has data (seed 001; issue 37, point 5): which tools with an offer check
(``Tool.offered``) an endpoint lists now, and which prompts with them.

A tool whose source is not configured and whose data is empty is not listed and not run: it
could only answer empty lists, which a model repeats as "there are none". A prompt is listed only
while every tool its text names (``Prompt.tools``) is, so no prompt sends the model to a tool it
cannot see.

Data arrives without a restart (an import in another process, a sync job): the checks are asked
again at most every ``RECHECK_SECONDS`` when a client lists tools or prompts or calls a tool not
listed, and at once after this process commits a data version bump (:func:`forget_offers`, from
campus_mcp.plugin.data_versions). When the answer changes, the endpoint's listeners on
``subscriptions/listen`` hear ``notifications/tools/list_changed`` (and prompts'): a 2025 chat
is stateless and sees the new list on its next ``tools/list``.

The server instructions are written when the server starts, from what the families register
then: they name only the tools offered at that time (a family registers its instruction
fragments only when it has a source or data).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable, Iterable

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.plugin.contributions import OfferCheck, Prompt, Tool
from campus_mcp.plugin.data_versions import when_bumped

# How long an answer of the checks is kept: a few cheap EXISTS statements per endpoint and
# process, at most this often, and only when a client lists or calls something.
RECHECK_SECONDS = 30.0

_all_offers: weakref.WeakSet[Offers] = weakref.WeakSet()


def forget_offers() -> None:
    """Ask every offer check again on next use: data changed in this process (a commit bumped a
    data version), so a tool that had nothing behind it may have something now."""
    for offers in list(_all_offers):
        offers.forget()


# A commit that bumps a data version may bring a tool its first rows.
when_bumped(forget_offers)


class Offers:
    """The tools of one endpoint that have an offer check, and which of them are hidden now."""

    def __init__(self, tools: Iterable[Tool], on_change: Callable[[], object] | None = None) -> None:
        self.checked: tuple[Tool, ...] = tuple(tool for tool in tools if tool.offered is not None)
        # Until the first check, every checked tool is hidden: the first listing asks (refresh).
        self.hidden: frozenset[str] = frozenset(tool.name for tool in self.checked)
        self._checked_at: float | None = None
        self._asked = False  # the first answer is no change: nobody saw the list before it
        self._on_change = on_change
        _all_offers.add(self)

    def forget(self) -> None:
        self._checked_at = None

    def _fresh(self) -> bool:
        return self._checked_at is not None and time.monotonic() - self._checked_at < RECHECK_SECONDS

    async def refresh(self, sessions: async_sessionmaker[AsyncSession]) -> bool:
        """Ask the checks again when their answer is older than ``RECHECK_SECONDS`` (or forgotten);
        whether the hidden tools changed since the last answer."""
        if not self.checked or self._fresh():
            return False
        # No lock: two requests that ask at once both read (a few EXISTS), and agree; a lock
        # would be bound to one event loop, and a server's object may outlive it (tests, forks).
        first = not self._asked
        answers: dict[OfferCheck, bool] = {}
        async with sessions() as session:
            for tool in self.checked:
                check = tool.offered
                assert check is not None
                if check not in answers:  # a family's tools share one check: asked once
                    answers[check] = await check(session)
        hidden = frozenset(tool.name for tool in self.checked if not answers[tool.offered])  # type: ignore[index]
        changed = hidden != self.hidden
        self.hidden = hidden
        self._checked_at = time.monotonic()
        self._asked = True
        if changed and not first and self._on_change is not None:
            result = self._on_change()
            if asyncio.iscoroutine(result):
                await result
        return changed

    def listed(self, tools: Iterable[Tool]) -> list[Tool]:
        return [tool for tool in tools if tool.name not in self.hidden]

    def listed_prompts(self, prompts: Iterable[Prompt], tool_names: Iterable[str]) -> list[Prompt]:
        """The prompts whose named tools are all listed (``tool_names``: the endpoint's tools)."""
        offered = set(tool_names) - self.hidden
        return [prompt for prompt in prompts if set(prompt.tools) <= offered]
