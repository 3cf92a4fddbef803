"""The plugins' connections of one student (``register_connections``), for the Settings page.

Settings is where a student disconnects apps, so one plugin's broken ``describe`` must not take
the page down: its connection is listed as unreadable (the error goes to the log, not the page)
and the others are shown. Each describe gets its own session, so a failed statement in one
(which aborts a PostgreSQL transaction) cannot fail the next.
"""

from __future__ import annotations

import dataclasses
import logging

from campus_mcp.contributions import Connection, ConnectionState
from campus_mcp.deployment import Deployment

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ConnectedThing:
    """A connection that holds something for the student; ``state`` None: it could not be read."""

    connection: Connection
    state: ConnectionState | None

    @property
    def reads(self) -> bool:
        """Whether it can read the student's data: connected and reading, or unreadable (assume it can)."""
        return self.state is None or (self.state.connected and self.state.reads)


async def connections_of(deployment: Deployment, student_id: int) -> list[ConnectedThing]:
    """Every connection that holds something for ``student_id``, in plugin order."""
    found: list[ConnectedThing] = []
    for connection in deployment.registry.connections:
        try:
            async with deployment.session() as session:
                state = await connection.describe(session, student_id)
        except Exception:  # a plugin's bug: log it with its plugin, keep the page
            log.exception("connection %r of plugin %r could not be described", connection.title, connection.plugin)
            found.append(ConnectedThing(connection, None))
            continue
        if state is not None:
            found.append(ConnectedThing(connection, state))
    return found
