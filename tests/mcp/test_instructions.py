"""The server instructions: assembled from the plugins' fragments, triggers first, never over 2,048
characters (some clients cut longer instructions silently), and serverInfo lists the topics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from campus_mcp import InstructionFragment, PluginInfo, hookimpl, testing
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.mcp.instructions import (
    MAX_INSTRUCTIONS_LENGTH,
    assemble_instructions,
    fragment_text,
    offers_something,
    server_description,
)
from campus_mcp.testing import CampusFactory


def registry_with(tmp_path: Path, extra: Sequence[tuple[str, object]] = (), **overrides: Any) -> Registry:
    return load_registry(testing.test_settings(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}", **overrides), extra)


class Fragments:
    def __init__(self, name: str, fragments: Sequence[InstructionFragment]) -> None:
        self.name = name
        self.fragments = list(fragments)

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name=self.name, version="1", title=f"{self.name.title()} topic", description="Test.")

    @hookimpl
    def register_instructions(self) -> list[InstructionFragment]:
        return self.fragments


def rule(number: int, length: int = 300) -> InstructionFragment:
    text = f"Rule {number:02d}: " + "keep answers short and cite the data source. " * 20
    return InstructionFragment(text=text[:length].rstrip() + ".", priority=200 + number)


def test_the_installed_plugins_instructions_fit(tmp_path: Path) -> None:
    instructions = assemble_instructions(registry_with(tmp_path))
    assert 0 < len(instructions) <= MAX_INSTRUCTIONS_LENGTH


def test_many_long_fragments_never_exceed_the_limit_and_triggers_come_first(tmp_path: Path) -> None:
    trigger = InstructionFragment(
        text="Library rooms: when a student asks for a study room, call find_room.", priority=1
    )
    # Registered before the trigger, and far more than fits.
    extra = [
        ("rules", Fragments("rules", [rule(n) for n in range(30)])),
        ("rooms", Fragments("rooms", [trigger])),
    ]
    registry = registry_with(tmp_path, extra, plugins=[])
    instructions = assemble_instructions(registry)
    assert len(instructions) <= MAX_INSTRUCTIONS_LENGTH
    assert instructions.startswith(trigger.text)
    parts = instructions.split("\n\n")
    # Whole fragments only: a cut never leaves half a sentence.
    whole = {fragment_text(f, registry.settings) for f in registry.instructions}
    assert all(part in whole for part in parts)
    numbers = [int(part[5:7]) for part in parts if part.startswith("Rule ")]
    assert numbers == sorted(numbers), "fragments are not in priority order"
    assert 0 < len(numbers) < 30


def test_a_short_fragment_after_a_long_one_that_does_not_fit_still_gets_in(tmp_path: Path) -> None:
    huge = InstructionFragment(text="Long rule. " * 300, priority=50)
    short = InstructionFragment(text="Short rule: be kind.", priority=60)
    registry = registry_with(tmp_path, [("mixed", Fragments("mixed", [huge, short]))], plugins=[])
    instructions = assemble_instructions(registry)
    assert "Long rule" not in instructions
    assert "Short rule: be kind." in instructions


def test_campus_placeholders_are_filled_and_other_braces_are_left_alone(tmp_path: Path) -> None:
    fragment = InstructionFragment(
        text='{short} times are in {timezone}. Pass the term as {"term": "202710"}.', priority=5
    )
    registry = registry_with(
        tmp_path, [("braces", Fragments("braces", [fragment]))], plugins=[], campus_short_name="MIT"
    )
    instructions = assemble_instructions(registry)
    assert instructions.startswith('MIT times are in America/New_York. Pass the term as {"term": "202710"}.')


def test_server_description_lists_every_topic_but_the_host(tmp_path: Path) -> None:
    registry = registry_with(tmp_path)
    description = server_description(registry)
    for name, info in registry.plugins.items():
        if name != "core":
            # A shell family (no tool, no prompt yet) is not a topic: it has nothing to offer.
            assert (info.title in description) == offers_something(registry, name)
    assert "Campus MCP host" not in description


# "auto" probes server/discover (the 2026-07-28 era); an explicit version would skip the probe.
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_clients_see_the_instructions_and_the_topics(mode: str, campus_factory: CampusFactory) -> None:
    trigger = InstructionFragment(text="Rooms: call find_room for study rooms.", priority=1)
    extra = [("rules", Fragments("rules", [rule(n) for n in range(30)])), ("rooms", Fragments("rooms", [trigger]))]
    campus = await campus_factory(plugins=["dining"], extra_plugins=extra)
    async with campus.mcp(mode=mode) as client:
        instructions = client.instructions or ""
        server_info = client.server_info
        version = client.protocol_version
    assert (version == "2026-07-28") == (mode == "auto")
    assert instructions.startswith(trigger.text)
    assert len(instructions) <= MAX_INSTRUCTIONS_LENGTH
    assert server_info is not None and server_info.description is not None
    assert "Dining hours" in server_info.description
    # Rooms and Rules give instructions but no tool: not topics of serverInfo.
    for title in ("Rooms topic", "Rules topic"):
        assert title not in server_info.description


def test_the_say_so_rule_is_never_the_fragment_left_out(tmp_path: Path) -> None:
    """Every installed family and the dining example fill the 2,048 characters; the host's rule that
    nothing changes without the student's say-so must still be in what every client reads."""
    text = assemble_instructions(registry_with(tmp_path))
    assert "Never change a student's data without the student's say-so" in text
    assert len(text) <= MAX_INSTRUCTIONS_LENGTH
