"""Who is asking: the signed-in student and the scopes the student granted to the client.

What those scopes allow is decided in :mod:`campus_mcp.assembly.access`.
"""

from __future__ import annotations

import contextvars
import dataclasses


@dataclasses.dataclass(frozen=True)
class Principal:
    user_id: int | None
    username: str | None
    client_id: str | None
    scopes: frozenset[str]
    audience: str | None = None
    # A student's personal access token (oauth/personal_tokens.py), not an app's OAuth token: its
    # permissions are fixed when it is made, so a missing one is fixed differently (access.py).
    personal_token: bool = False
    # The app's registered name, read with the token: the permission error gives the step that
    # adds a permission in that app (campus_mcp.plugin.client_steps). Never shown as it was given.
    client_name: str | None = None

    @property
    def is_anonymous(self) -> bool:
        return self.user_id is None


ANONYMOUS = Principal(user_id=None, username=None, client_id=None, scopes=frozenset())

# Set by the MCP endpoint's authentication wrapper for the duration of one request.
current_principal: contextvars.ContextVar[Principal] = contextvars.ContextVar("campus_mcp_principal", default=ANONYMOUS)
