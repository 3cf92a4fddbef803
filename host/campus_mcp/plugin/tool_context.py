"""What a tool handler gets besides its arguments."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping, Set
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.read_sessions import read_sessions
from campus_mcp.base.settings import Settings
from campus_mcp.plugin.confirmation import Decision, PlannedChange
from campus_mcp.plugin.errors import PermissionMissing
from campus_mcp.plugin.job_context import Job
from campus_mcp.plugin.principal import Principal


@dataclasses.dataclass(frozen=True)
class ToolContext:
    principal: Principal
    settings: Settings
    sessions: async_sessionmaker[AsyncSession]
    protocol_version: str | None = None
    # The arguments of the MCP request's _meta, the client's declared capabilities, etc.
    request_meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The calling tool's plugin's settings object (its PluginInfo.settings_model, loaded once at
    # start-up), or None for a plugin without one. Typed Any so that a plugin reads its own fields
    # (``context.plugin_settings.feed``) without a cast.
    plugin_settings: Any = None
    # The settings objects of the plugins the calling tool's plugin depends on (PluginInfo.depends_on),
    # by name: what plugin_settings_of() hands out. Not the registry: a tool sees what it declared.
    dependency_settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # The names of the deployment's tools: what a prompt (or an answer) may point the assistant to,
    # when it names another plugin's tool that a campus may not run.
    tool_names: Set[str] = frozenset()
    # The names of the deployment's plugins: whom a family may ask for something it does not keep
    # itself (the catalog asks the schedule family for a student's sections).
    plugin_names: Set[str] = frozenset()
    # The deployment's scheduled jobs by name: what an answer may say about how often data is read
    # again (a seat watch tells how often seats are refreshed here).
    jobs: Mapping[str, Job] = dataclasses.field(default_factory=dict)
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

    def plugin_settings_of(self, plugin: str) -> Any:
        """The settings object of ``plugin``, one the calling tool's plugin declares in
        ``PluginInfo.depends_on`` (None when that plugin has no settings model). Asking for one not
        declared is a mistake of the plugin's, named here rather than answered with None."""
        if plugin not in self.dependency_settings:
            raise LookupError(
                f"the settings of the plugin {plugin!r} are not this tool's to read: declare "
                f"depends_on=({plugin!r},) in the PluginInfo of the tool's plugin"
            )
        return self.dependency_settings[plugin]

    @property
    def user_id(self) -> int:
        """The signed-in student's id. Tools that need one are never given to anonymous callers."""
        if self.principal.user_id is None:
            raise PermissionMissing(
                "This tool reads a student's own data, so it needs a signed-in student. "
                "Connect the app with a campus account.",
                scope="",
            )
        return self.principal.user_id
