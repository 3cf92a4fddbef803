"""Who may do what: the one place that answers the access questions (seed 000 "Scopes").

The MCP endpoint (the 403 step-up), the MCP server (``tools/list``, ``tools/call``) and the
consent page all ask here, so they cannot disagree:

- which scopes a caller effectively holds: the granted ones, the legacy ``read`` expanded to
  every read scope, and the always-on public scopes everyone holds;
- which tools a caller sees: a signed-in client every tool, an anonymous one the public toolset;
- whether a caller may call a tool, and the permission error a student reads when not;
- the step-up: which scopes a client that may sign in again should ask for, and whether the
  consent page of such a client starts with the requested boxes checked;
- what the consent page offers for a requested ``scope`` string, and what a decision grants.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from campus_mcp.assembly.registry import Registry
from campus_mcp.plugin.client_steps import reconnect_step
from campus_mcp.plugin.contributions import Scope, Tool
from campus_mcp.plugin.errors import PermissionMissing
from campus_mcp.plugin.links import PageLink
from campus_mcp.plugin.principal import Principal

# Tokens and clients from before the scopes were split carry ``read``; it stands for every read scope.
LEGACY_READ_SCOPE = "read"
# The dashboard page where a student makes personal access tokens (oauth/token_pages.py): where
# the errors about a token's permissions send its student.
TOKENS_PAGE = "/dashboard/tokens"


def always_on_scopes(registry: Registry) -> frozenset[str]:
    """The public scopes: every caller holds them, signed in or not, and no box asks for them."""
    return frozenset(name for name, scope in registry.scopes.items() if scope.always_on)


def challenged_scopes(registry: Registry) -> list[str]:
    """The scopes a client is told to ask for (the 401 challenge) and a personal token offers:
    every one but the reserved, which no tool needs yet."""
    return [name for name, scope in registry.scopes.items() if not scope.reserved]


def read_scopes(registry: Registry) -> frozenset[str]:
    """The scopes that change nothing: what the legacy ``read`` stands for."""
    return frozenset(name for name, scope in registry.scopes.items() if not scope.writes)


def expand_legacy(registry: Registry, names: Iterable[str]) -> frozenset[str]:
    """``names`` with the legacy ``read`` standing for every read scope."""
    expanded = set(names)
    if LEGACY_READ_SCOPE in expanded:
        expanded |= read_scopes(registry)
    return frozenset(expanded)


def effective_scopes(registry: Registry, principal: Principal) -> frozenset[str]:
    """What the caller may use: the granted scopes (``read`` expanded) plus the always-on ones."""
    return expand_legacy(registry, principal.scopes) | always_on_scopes(registry)


def visible_tools(registry: Registry, principal: Principal) -> list[Tool]:
    """A signed-in client sees every tool; an anonymous one only the public toolset (seed 002).

    A signed-in client sees the tools it may not call too, so that the call can answer with the
    permission to add instead of "unknown tool".
    """
    if principal.is_anonymous:
        public = always_on_scopes(registry)
        return [tool for tool in registry.tools.values() if tool.scope in public]
    return list(registry.tools.values())


def may_call(registry: Registry, principal: Principal, tool: Tool) -> bool:
    return tool.scope in effective_scopes(registry, principal)


def permission_missing(registry: Registry, tool: Tool, principal: Principal | None = None) -> PermissionMissing:
    """The tool error a student reads when the app lacks the tool's scope: what to do, and where.

    A personal access token keeps the permissions it was made with (no consent page to go back
    to), so its student is sent to make a new token instead.
    """
    scope = registry.scopes[tool.scope]
    settings = registry.settings
    if principal is not None and principal.personal_token:
        tokens_url = f"{settings.base_url}{TOKENS_PAGE}"
        return PermissionMissing(
            f"{tool.name} needs the permission {scope.name!r} ({scope.description}), which this personal "
            "access token was not given, and a token's permissions cannot be changed. To add it: make a "
            f"new token with the box for {scope.name!r} checked on the dashboard's Access tokens page "
            f"({tokens_url}), use it instead of this one, and disconnect this one there.",
            scope=tool.scope,
            links=[
                PageLink(
                    name="access-tokens",
                    title="Access tokens",
                    url=tokens_url,
                    description="Make a personal access token with the permissions you choose; disconnect old ones.",
                )
            ],
        )
    settings_url = f"{settings.base_url}/dashboard/settings#connected-apps"
    # The step in the app the student uses, when we know the app (issue 39, point 4).
    step = reconnect_step(
        principal.client_name if principal else None, principal.client_id if principal else None, settings.product_name
    )
    return PermissionMissing(
        f"{tool.name} needs the permission {scope.name!r} ({scope.description}), which this app "
        f"was not given. To add it: {step} and check the box for {scope.name!r} "
        f"({scope.title}) on the consent page. Settings on the dashboard "
        f"({settings_url}) shows the permissions of each app.",
        scope=tool.scope,
        links=[
            PageLink(
                name="connected-apps",
                title="Connected apps",
                url=settings_url,
                description="The permissions each app holds, and Disconnect.",
            )
        ],
    )


def check_call(registry: Registry, principal: Principal, tool: Tool) -> None:
    """Raise the permission error unless the caller may call ``tool``."""
    if not may_call(registry, principal, tool):
        raise permission_missing(registry, tool, principal)


def step_up_scope(registry: Registry, principal: Principal, tool: Tool) -> str | None:
    """The ``scope`` of a 403 step-up challenge for this call, or None when the call may go on.

    Anonymous callers never get one (they have no token to step up). The challenge lists the
    token's scopes plus the missing one, so a client that replaces its scopes keeps the others.
    """
    if principal.is_anonymous or may_call(registry, principal, tool):
        return None
    return " ".join(sorted({*principal.scopes, tool.scope}))


def on_step_up_list(allowed: Sequence[str], client_id: str, client_name: str | None) -> bool:
    """Seed 000: only the clients on the allow list (by id or by name) get the 403 step-up;
    the others get the permission error, which a student can read."""
    return client_id in allowed or (client_name is not None and client_name in allowed)


def requested_scopes(registry: Registry, raw: str | None) -> list[Scope]:
    """What a client asked for in its ``scope`` string, in registry order (``read`` expanded);
    names the registry does not know are dropped."""
    asked = expand_legacy(registry, (raw or "").split())
    return [scope for name, scope in registry.scopes.items() if name in asked]


def starts_checked(scope: Scope, *, remembered: frozenset[str] | None, stepping_up: bool) -> bool:
    """Whether the consent page's box for ``scope`` starts checked.

    An allow-listed app coming back for more (``stepping_up``) gets the requested boxes checked;
    a student who chose before gets their last choice; a first consent checks the read scopes
    that ask to be, never one that changes data.
    """
    if stepping_up or (remembered is not None and scope.name in remembered):
        return True
    return remembered is None and scope.starts_checked and not scope.writes


def granted_scope(registry: Registry, offered: Iterable[str], checked: Iterable[str]) -> tuple[frozenset[str], str]:
    """A consent decision: the boxes the student checked that were offered, and the ``scope`` of
    the grant (those plus the always-on scopes, in registry order). A box that was not offered
    (a forged form) grants nothing."""
    chosen = frozenset(checked) & frozenset(offered)
    granted = chosen | always_on_scopes(registry)
    return chosen, " ".join(name for name in registry.scopes if name in granted)
