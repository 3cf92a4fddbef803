"""The server instructions and the serverInfo description, assembled from the plugins.

Claude Code cuts instructions after 2,048 characters with no error (seed 000). Fragments are
joined in priority order (triggers first) and a fragment that would cross the limit is left
out whole, so a cut removes rules, never a trigger, and never half a sentence.
"""

from __future__ import annotations

from campus_mcp.registry import Registry

MAX_INSTRUCTIONS_LENGTH = 2048


def assemble_instructions(registry: Registry) -> str:
    settings = registry.settings
    parts: list[str] = []
    length = 0
    for fragment in registry.instructions:
        text = fragment.text.format(
            campus=settings.campus_name,
            short=settings.campus_short_name,
            product=settings.product_name,
            timezone=settings.timezone,
        ).strip()
        added = len(text) + (2 if parts else 0)
        if length + added > MAX_INSTRUCTIONS_LENGTH:
            continue
        parts.append(text)
        length += added
    return "\n\n".join(parts)


def server_description(registry: Registry) -> str:
    settings = registry.settings
    topics = [info.title for name, info in registry.plugins.items() if name != "core"]
    listed = ", ".join(topics) if topics else "no topics (no plugin is enabled)"
    return f"{settings.campus_name} data for AI assistants: {listed}."
