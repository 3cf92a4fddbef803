"""Who is asking: the signed-in student and the scopes the student granted to the client."""

from __future__ import annotations

import contextvars
import dataclasses

# Tokens issued before the scopes were split carry ``read``; it stands for every read scope.
LEGACY_READ_SCOPE = "read"


@dataclasses.dataclass(frozen=True)
class Principal:
    user_id: int | None
    username: str | None
    client_id: str | None
    scopes: frozenset[str]
    audience: str | None = None

    @property
    def is_anonymous(self) -> bool:
        return self.user_id is None

    def has_scope(self, scope: str, *, read_scopes: frozenset[str] = frozenset()) -> bool:
        if scope in self.scopes:
            return True
        return LEGACY_READ_SCOPE in self.scopes and scope in read_scopes


ANONYMOUS = Principal(user_id=None, username=None, client_id=None, scopes=frozenset())

# Set by the MCP endpoint's authentication wrapper for the duration of one request.
current_principal: contextvars.ContextVar[Principal] = contextvars.ContextVar("campus_mcp_principal", default=ANONYMOUS)
