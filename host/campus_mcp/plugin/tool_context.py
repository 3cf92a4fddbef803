"""What a tool handler gets besides its arguments."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.read_sessions import read_sessions
from campus_mcp.base.settings import Settings
from campus_mcp.plugin.confirmation import Decision, PlannedChange
from campus_mcp.plugin.principal import Principal

if TYPE_CHECKING:
    from campus_mcp.assembly.registry import Registry


@dataclasses.dataclass(frozen=True)
class ToolContext:
    principal: Principal
    settings: Settings
    registry: Registry
    sessions: async_sessionmaker[AsyncSession]
    protocol_version: str | None = None
    # The arguments of the MCP request's _meta, the client's declared capabilities, etc.
    request_meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The calling tool's plugin's settings object (its PluginInfo.settings_model, loaded once at
    # start-up), or None for a plugin without one. Typed Any so that a plugin reads its own fields
    # (``context.plugin_settings.feed``) without a cast.
    plugin_settings: Any = None
    # A write tool's run: what the student answered the host's question (campus_mcp.plugin.confirmation).
    # "not_asked" on the REST twin and for a client that cannot be asked (seed 000: it changes).
    confirmation: Decision = "not_asked"
    # A write tool's run: the plan this call made (its ``reading`` is what the plan read), or None
    # (nothing to change, or the REST twin, which plans nothing).
    planned: PlannedChange | None = None
    # A read session already open for this call (an operation's answer cache read its key in it):
    # ``session(read_only=True)`` hands it on, so the call's reads share it. Set by the host only.
    _reading: AsyncSession | None = dataclasses.field(default=None, repr=False, compare=False)

    @asynccontextmanager
    async def session(self, *, read_only: bool = False) -> AsyncIterator[AsyncSession]:
        """A database session, closed on leaving. ``read_only=True`` for work that only reads
        (a lookup tool's query): no transaction, one round trip per statement on PostgreSQL,
        and a write in it fails (``campus_mcp.base.read_sessions``). Writes, and reads that must
        hold a lock or see one snapshot, keep the default: a transaction, committed by you."""
        if read_only and self._reading is not None:
            yield self._reading  # closed by whoever opened it
            return
        sessions = read_sessions(self.sessions) if read_only else self.sessions
        async with sessions() as session:
            yield session

    @property
    def user_id(self) -> int:
        """The signed-in student's id. Tools that need one are never given to anonymous callers."""
        if self.principal.user_id is None:
            from campus_mcp.plugin.errors import PermissionMissing

            raise PermissionMissing(
                "This tool reads a student's own data, so it needs a signed-in student. "
                "Connect the app with a campus account.",
                scope="",
            )
        return self.principal.user_id
