"""The server promises only what it has (issue 8, point 6).

What a client reads about the server (the instructions, the serverInfo description, every tool
description, every prompt) may name a tool only if that tool is in the deployment's toolset, and
the permissions it asks for (the 401 challenge, hence the consent page) are only scopes a tool
needs. A family that is still a shell, or is disabled, must leave no trace. The checker is
generic: it runs for the default deployment and for every legal CAMPUS_MCP_DISABLE, and it knows
every tool seed 000 plans, so a tool named before it exists fails here as the families arrive.
"""

from __future__ import annotations

import re

import pytest
from campus_mcp import testing
from campus_mcp.assembly.registry import installed_plugin_names, load_registry
from campus_mcp.testing import CampusFactory, CampusHarness
from mcp.shared.exceptions import MCPError

# The 28 tools of seed 000's tool table, and the meta tools of seed 004 and DESIGN ("whoami").
SEED_000_TOOLS = frozenset(
    {
        "list_terms",
        "list_subjects",
        "search_sections",
        "get_section",
        "search_courses",
        "get_course",
        "list_programs",
        "degree_requirements",
        "list_term_electives",
        "similar_sections",
        "check_schedule",
        "search_instructors",
        "get_instructor",
        "similar_instructors",
        "search_reviews",
        "catalog_graphql",
        "my_courses",
        "my_course_history",
        "my_busy_times",
        "my_finals",
        "list_friends",
        "friend_busy_times",
        "university_events",
        "my_calendar_settings",
        "preview_template",
        "update_class_settings",
        "update_calendar_settings",
        "set_notifications",
    }
)
META_TOOLS = frozenset({"list_toolboxes", "open_toolbox", "call_read_only", "call_tool", "whoami"})
BACKTICKED = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")
# The students' words for the schedule family's tools: only a deployment with them may use them.
OWN_SCHEDULE_WORDS = ("'my classes'", "'my finals'", "'my schedule'")


def known_tool_names() -> frozenset[str]:
    every_installed = load_registry(testing.test_settings("sqlite+aiosqlite:///:memory:")).tools
    return SEED_000_TOOLS | META_TOOLS | frozenset(every_installed)


def named_tools(text: str, known: frozenset[str]) -> set[str]:
    words = set(re.findall(r"[a-z][a-z0-9_]*", text))
    return (words & known) | set(BACKTICKED.findall(text))


def legal_disables() -> list[tuple[str, ...]]:
    """The default deployment, and each installed plugin disabled with the plugins that need it."""
    registry = load_registry(testing.test_settings("sqlite+aiosqlite:///:memory:"))
    needs = {name: set(info.depends_on) for name, info in registry.plugins.items()}
    variants: list[tuple[str, ...]] = [()]
    for plugin in installed_plugin_names():
        gone = {plugin}
        while more := {name for name, wants in needs.items() if wants & gone and name not in gone}:
            gone |= more
        variants.append(tuple(sorted(gone)))
    return sorted(set(variants))


async def texts_a_client_reads(campus: CampusHarness) -> dict[str, str]:
    """Every text a signed-in client reads, through the real SDK client, keyed by where it is."""
    texts: dict[str, str] = {}
    async with campus.mcp(scopes=campus.registry.scopes, user_id=1) as client:
        assert client.server_info is not None
        texts["instructions"] = client.instructions or ""
        texts["serverInfo.description"] = client.server_info.description or ""
        for tool in (await client.list_tools()).tools:
            texts[f"tool {tool.name}"] = tool.description or ""
        for prompt in (await client.list_prompts()).prompts:
            texts[f"prompt {prompt.name}"] = prompt.description or ""
            arguments = {a.name: "COMP 2350" for a in prompt.arguments or []}
            try:
                got = await client.get_prompt(prompt.name, arguments)
            except MCPError as exc:  # a prompt that refuses the sample arguments still names tools
                texts[f"prompt {prompt.name} error"] = exc.error.message
                continue
            texts[f"prompt {prompt.name} text"] = "\n".join(str(getattr(m.content, "text", "")) for m in got.messages)
    return texts


async def challenge_scopes(campus: CampusHarness) -> set[str]:
    """The scopes the 401 challenge names: what a client asks for, so what the consent page offers."""
    async with campus.rest() as client:
        response = await client.post(
            "/api/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream", "Authorization": "Bearer nothing-valid"},
        )
    assert response.status_code == 401
    match = re.search(r'scope="([^"]*)"', response.headers["www-authenticate"])
    assert match is not None, response.headers["www-authenticate"]
    return set(match.group(1).split())


@pytest.mark.parametrize("disable", legal_disables(), ids=lambda d: "disable=" + (",".join(d) or "none"))
async def test_the_server_names_only_tools_it_has(campus_factory: CampusFactory, disable: tuple[str, ...]) -> None:
    campus = await campus_factory(disable=list(disable))
    toolset = {tool.name for tool in campus.registry.tools.values()}
    known = known_tool_names()
    texts = await texts_a_client_reads(campus)
    promised = {where: sorted(named_tools(text, known) - toolset) for where, text in texts.items()}
    assert {where: names for where, names in promised.items() if names} == {}
    if "my_courses" not in toolset:
        for where, text in texts.items():
            assert not [w for w in OWN_SCHEDULE_WORDS if w in text], f"{where} promises the student's own schedule"


@pytest.mark.parametrize("disable", legal_disables(), ids=lambda d: "disable=" + (",".join(d) or "none"))
async def test_every_offered_scope_has_a_tool(campus_factory: CampusFactory, disable: tuple[str, ...]) -> None:
    campus = await campus_factory(disable=list(disable))
    used = {tool.scope for tool in campus.registry.tools.values()}
    offered = await challenge_scopes(campus)
    # The reserved scopes (issue 37 point 9) are accepted when asked for, never asked for.
    assert offered == {name for name, scope in campus.registry.scopes.items() if not scope.reserved}
    assert offered - used == set(), "the consent page would offer permissions no tool needs"


@pytest.mark.parametrize("disable", legal_disables(), ids=lambda d: "disable=" + (",".join(d) or "none"))
async def test_server_info_lists_only_topics_with_tools(
    campus_factory: CampusFactory, disable: tuple[str, ...]
) -> None:
    campus = await campus_factory(disable=list(disable))
    registry = campus.registry
    async with campus.mcp() as client:
        assert client.server_info is not None
        description = client.server_info.description or ""
        instructions = client.instructions or ""
    for name, info in registry.plugins.items():
        offers = any(t.plugin == name for t in registry.tools.values()) or any(
            p.plugin == name for p in registry.prompts.values()
        )
        if name != "core" and not offers:
            assert info.title not in description, f"serverInfo names {info.title!r}, which has no tool yet"
            fragments = [f.text for f in registry.instructions if f.plugin == name]
            assert not [f for f in fragments if f.strip() and f.strip()[:40] in instructions], name


def test_the_checker_finds_a_tool_that_is_not_there() -> None:
    """The checker itself: a named tool outside the toolset, backticked or known, is found."""
    known = SEED_000_TOOLS | META_TOOLS
    text = "For your own classes call my_courses; for your dorm call `book_laundry`. Then list_terms."
    assert named_tools(text, known) - {"list_terms"} == {"my_courses", "book_laundry"}


@pytest.mark.parametrize("disable", legal_disables(), ids=lambda d: "disable=" + (",".join(d) or "none"))
async def test_the_home_page_names_only_topics_with_tools(
    campus_factory: CampusFactory, disable: tuple[str, ...]
) -> None:
    campus = await campus_factory(disable=list(disable))
    registry = campus.registry
    async with campus.rest() as client:
        home = await client.get("/")
    assert home.status_code == 200
    lead = re.search(r'<p class="lead">(.*?)</p>', home.text)
    assert lead is not None, home.text
    for name, info in registry.plugins.items():
        if name == "core":
            continue
        offers = any(t.plugin == name for t in registry.tools.values()) or any(
            p.plugin == name for p in registry.prompts.values()
        )
        assert (info.title in lead.group(1)) == offers, (info.title, lead.group(1))
