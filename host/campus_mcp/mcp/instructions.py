"""The server instructions and the serverInfo description, assembled from the plugins.

Claude Code cuts instructions after 2,048 characters with no error (seed 000). Fragments are
joined in priority order (triggers first) and a fragment that would cross the limit is left
out whole, so a cut removes rules, never a trigger, and never half a sentence.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from campus_mcp.assembly.registry import Registry
from campus_mcp.base.settings import Settings
from campus_mcp.plugin.contributions import InstructionFragment

MAX_INSTRUCTIONS_LENGTH = 2048


def fragment_text(fragment: InstructionFragment, settings: Settings) -> str:
    """The fragment with the campus placeholders filled in.

    Plain replacement rather than ``str.format``: a brace in a fragment (a JSON example, or a
    campus name a plugin already filled in) must not stop the server from starting.
    """
    text = fragment.text
    for placeholder, value in {
        "campus": settings.campus_name,
        "short": settings.campus_short_name,
        "product": settings.product_name,
        "timezone": settings.timezone,
    }.items():
        text = text.replace("{" + placeholder + "}", value)
    return text.strip()


def offers_something(registry: Registry, plugin: str) -> bool:
    """Whether ``plugin`` gives a client anything to use: a tool or a prompt.

    Only such a plugin is a topic of serverInfo: a family that is still a shell (no tools yet)
    would otherwise send the model after tools that do not exist (issue 8.6). The host (``core``)
    is never a topic. ``tests/mcp/test_server_promises.py`` holds every text to the same rule.
    """
    return any(t.plugin == plugin for t in registry.tools.values()) or any(
        p.plugin == plugin for p in registry.prompts.values()
    )


def assemble_instructions(
    registry: Registry, plugins: Collection[str] | None = None, first: Sequence[InstructionFragment] = ()
) -> str:
    """``plugins``: only these plugins' fragments (and the host's), for an endpoint that serves only
    them (``/api/mcp/{plugin}``); ``first``: the endpoint's own fragments, ahead of the plugins'."""
    parts: list[str] = []
    length = 0
    chosen = [f for f in registry.instructions if plugins is None or f.plugin in plugins or f.plugin == "core"]
    for fragment in [*first, *chosen]:
        text = fragment_text(fragment, registry.settings)
        added = len(text) + (2 if parts else 0)
        if length + added > MAX_INSTRUCTIONS_LENGTH:
            continue
        parts.append(text)
        length += added
    return "\n\n".join(parts)


def topics(registry: Registry, plugins: Collection[str] | None = None) -> list[str]:
    """The titles of the plugins that offer a tool or a prompt: what the server may say it covers."""
    return [
        info.title
        for name, info in registry.plugins.items()
        if name != "core" and offers_something(registry, name) and (plugins is None or name in plugins)
    ]


def server_description(registry: Registry, plugins: Collection[str] | None = None) -> str:
    listed = ", ".join(topics(registry, plugins)) or "no topics (no plugin is enabled)"
    return f"{registry.settings.campus_name} data for AI assistants: {listed}."
