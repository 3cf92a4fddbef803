"""Every tool refuses an argument it does not take, by name (issue 37, point 9), on the kit's demo
campus with every family and the dining example: ``list_friends``, ``friend_busy_times`` and the
dining tools ran with it before, so a model's misspelled argument was silently ignored.

Each tool is called with its first demo example's arguments (a valid call) plus one it does not
take; the refusal names that argument. Write tools are refused before anything is planned.
"""

from __future__ import annotations

from typing import Any

from campus_mcp.testing import CampusHarness

EXTRA = "not_an_argument"


async def test_every_tool_refuses_an_argument_it_does_not_take_by_name(demo_campus: CampusHarness) -> None:
    principal = await demo_campus.student_principal("student1")
    examples: dict[str, dict[str, Any]] = {}
    for example in demo_campus.registry.tool_examples:
        if example.data == "demo":
            examples.setdefault(example.tool, dict(example.arguments))
    accepted = []
    for name in sorted(demo_campus.registry.tools):
        result = await demo_campus.call(name, {**examples.get(name, {}), EXTRA: 1}, principal=principal)
        said = "".join(getattr(item, "text", "") for item in result.content)
        if not (result.is_error and f"{EXTRA}: Extra inputs are not permitted" in said):
            accepted.append(name)
    assert {"list_friends", "friend_busy_times", "list_dining_halls"} <= set(demo_campus.registry.tools)
    assert accepted == []
