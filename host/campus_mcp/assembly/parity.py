"""The parity check (seed 002): every REST route a plugin registers under /api has its MCP tool.

A route is covered when a tool names it in ``mirrors``, when its plugin lists it as exempt with a
written reason, or when its plugin lists it as pending. The check fails on:

- a route with none of the three;
- a tool that names a route no plugin registers (dangling);
- a tool that names no route and gives no reason for it (unmirrored);
- a pending entry whose route already has a tool, or that names no route (stale);
- an exemption that names no route, or whose reason is empty.

The routes are read from the finished Litestar app, so what is checked is what is served.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from litestar import Litestar

from campus_mcp.assembly.registry import Registry

PARAM = re.compile(r"\{([^}:]+)(?::[^}]+)?\}")


def normalize(path: str) -> str:
    """``/sections/{crn:str}`` and ``/sections/{crn}`` are the same route."""
    return PARAM.sub(r"{\1}", path.rstrip("/") or "/")


@dataclasses.dataclass
class ParityReport:
    routes: dict[str, str]  # "GET /api/..." -> plugin
    covered: dict[str, list[str]]  # route -> tools
    exempt: dict[str, str]
    pending: list[str]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"ok": self.ok}


def plugin_api_routes(app: Litestar) -> dict[str, str]:
    routes: dict[str, str] = {}
    for route in app.routes:
        path = normalize(route.path)
        if not path.startswith("/api/"):
            continue
        for handler in getattr(route, "route_handlers", []):
            opts = handler.opt
            plugin = opts.get("campus_plugin")
            if plugin is None or opts.get("exclude_from_parity"):
                continue
            for method in sorted(getattr(handler, "http_methods", ()) or ()):
                if method in ("HEAD", "OPTIONS"):
                    continue
                routes[f"{method} {path}"] = plugin
    return routes


def check_parity(app: Litestar, registry: Registry, *, plugin: str | None = None) -> ParityReport:
    """The report over every plugin, or with ``plugin`` only the problems that plugin can fix."""
    routes = plugin_api_routes(app)
    covered: dict[str, list[str]] = {}
    # Each problem with the plugin that owns it (the route's, the tool's or the group's).
    owned: list[tuple[str, str]] = []
    for tool in registry.tools.values():
        for ref in tool.mirrors:
            key = f"{ref.method} {normalize(ref.path)}"
            if key not in routes:
                owned.append(
                    (tool.plugin, f"dangling: tool {tool.name} ({tool.plugin}) mirrors {key}, which no plugin serves")
                )
            covered.setdefault(key, []).append(tool.name)
        if not tool.mirrors and not tool.no_route_reason.strip():
            owned.append(
                (
                    tool.plugin,
                    f"unmirrored: tool {tool.name} ({tool.plugin}) mirrors no route. Name the route it mirrors "
                    "(Tool.mirrors), or say why it has none (Tool.no_route_reason)",
                )
            )
    exempt: dict[str, str] = {}
    pending: list[str] = []
    for group in registry.route_groups:
        for raw, reason in group.exempt.items():
            method, _, path = raw.partition(" ")
            key = f"{method} {normalize(path)}"
            if key not in routes:
                owned.append((group.plugin, f"stale exemption: {key} ({group.plugin}) names no route"))
            if not reason.strip():
                owned.append((group.plugin, f"exemption without a reason: {key} ({group.plugin})"))
            exempt[key] = reason
        for raw in group.pending:
            method, _, path = raw.partition(" ")
            key = f"{method} {normalize(path)}"
            if key not in routes:
                owned.append((group.plugin, f"stale pending entry: {key} ({group.plugin}) names no route"))
            elif key in covered:
                owned.append(
                    (
                        group.plugin,
                        f"stale pending entry: {key} ({group.plugin}) already has the tool {', '.join(covered[key])}; remove it from pending",
                    )
                )
            pending.append(key)
    for key, owner in sorted(routes.items()):
        if key not in covered and key not in exempt and key not in pending:
            owned.append(
                (
                    owner,
                    f"uncovered: {key} ({owner}) has no tool. Add a tool that mirrors it, or list it as exempt with a reason, or as pending",
                )
            )
    problems = [problem for owner, problem in owned if plugin is None or owner == plugin]
    return ParityReport(routes=routes, covered=covered, exempt=exempt, pending=pending, problems=problems)
