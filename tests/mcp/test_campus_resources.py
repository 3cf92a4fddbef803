"""``campus://`` resources (issue 29, point 1): the catalog's sections, courses and terms and the
student's own schedule and finals, each the JSON of its tool's answer.

Over real HTTP with the SDK client on a demo campus with every family, on both wires
(2025-11-25 and 2026-07-28), on the flat endpoint, the toolbox endpoint and the family endpoints:
``resources/templates/list``, ``resources/read`` and ``completion/complete`` of the templates'
variables; a private resource is cached per student and needs the tool's permission.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import pytest
import pytest_asyncio
from campus_mcp import PluginError, PluginInfo, ResourceTemplate, hookimpl
from campus_mcp.assembly.registry import load_registry
from campus_mcp.testing import CampusHarness, TestDatabases
from campus_mcp.testing import test_settings as settings_for
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ResourceTemplateReference

from tests.support.endpoints import ERAS, MODERN, mcp_client, served_demo_campus, token_for

TEMPLATES = {
    "campus://sections/{term}/{crn}",
    "campus://courses/{code}",
    "campus://terms",
    "campus://me/schedule/{term}",
    "campus://me/finals/{term}",
}
READ_SCOPES = ("schedule:read",)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


def answer_of(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    answer: dict[str, Any] = result.structured_content
    return answer


def read_json(result: Any) -> dict[str, Any]:
    (content,) = result.contents
    assert content.mime_type == "application/json"
    value: dict[str, Any] = json.loads(content.text)
    return value


async def a_section(client: Client) -> tuple[str, str, str]:
    """A term uid, one CRN of that term and its course code, from the tools."""
    terms = answer_of(await client.call_tool("list_terms", {}))
    term = (terms["current"] or terms["next"])["uid"]
    page = answer_of(await client.call_tool("search_sections", {"term": term, "subject": "COMP"}))
    section = page["sections"][0]
    return term, section["crn"], section["course_code"]


@pytest.mark.parametrize("path", ["/api/mcp", "/api/mcp/toolboxes", "/api/mcp/catalog"])
@pytest.mark.parametrize("mode", ERAS)
async def test_a_section_course_and_the_terms_read_as_their_tools_answer(
    served: tuple[str, CampusHarness], path: str, mode: str
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with mcp_client(f"{base}/api/mcp", token, mode) as tools:
        term, crn, code = await a_section(tools)
        section = answer_of(await tools.call_tool("get_section", {"term": term, "crn": crn}))
        course = answer_of(await tools.call_tool("get_course", {"code": code}))
        terms = answer_of(await tools.call_tool("list_terms", {}))
    async with mcp_client(f"{base}{path}", token, mode) as client:
        templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
        read_section = await client.read_resource(f"campus://sections/{term}/{crn}")
        read_course = await client.read_resource(f"campus://courses/{code.replace(' ', '%20')}")
        read_terms = await client.read_resource("campus://terms")
        modern = str(client.protocol_version) == MODERN
    catalog = {t for t in TEMPLATES if not t.startswith("campus://me/")}
    assert set(templates) == (catalog if path == "/api/mcp/catalog" else TEMPLATES), templates
    assert "get_section" in (templates["campus://sections/{term}/{crn}"].description or "")
    assert read_json(read_section) == section
    assert read_json(read_course) == course
    assert read_json(read_terms) == terms
    assert modern == (mode == "auto")
    if modern:
        assert (read_section.cache_scope, read_section.ttl_ms) == ("public", 60_000)


@pytest.mark.parametrize("mode", ERAS)
async def test_my_schedule_is_mine_private_and_needs_schedule_read(
    served: tuple[str, CampusHarness], mode: str
) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with mcp_client(f"{base}/api/mcp/toolboxes", token, mode) as client:
        terms = answer_of(await client.call_tool("call_tool", {"name": "list_terms", "arguments": {}}))
    term = (terms["current"] or terms["next"])["uid"]
    async with mcp_client(f"{base}/api/mcp", token, mode) as client:
        courses = answer_of(await client.call_tool("my_courses", {"term": term}))
        finals = answer_of(await client.call_tool("my_finals", {"term": term}))
        schedule = await client.read_resource(f"campus://me/schedule/{term}")
        exams = await client.read_resource(f"campus://me/finals/{term}")
        modern = str(client.protocol_version) == MODERN
    assert courses["courses"], "student1 has courses in the demo's current term"
    # Issue 37, point 8: the weekday beside each final's date.
    assert finals["finals"] and all(f["weekday"] == f"{date.fromisoformat(f['date']):%A}" for f in finals["finals"])
    assert read_json(schedule) == courses
    assert read_json(exams) == finals
    if modern:
        assert schedule.cache_scope == "private"

    catalog_only = await token_for(campus.deployment, ["catalog"])
    async with mcp_client(f"{base}/api/mcp", catalog_only, mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"campus://me/schedule/{term}")
    assert "schedule:read" in str(refused.value), refused.value
    assert "Traceback" not in str(refused.value)


@pytest.mark.parametrize("mode", ERAS)
async def test_unknown_resources_and_bad_crns_say_what_to_do(served: tuple[str, CampusHarness], mode: str) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with mcp_client(f"{base}/api/mcp", token, mode) as client:
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("campus://rooms/1")
        with pytest.raises(MCPError) as bad:
            await client.read_resource("campus://sections/202710/notacrn")
    assert "campus://sections/{term}/{crn}" in str(unknown.value), unknown.value
    assert "5-digit" in str(bad.value), bad.value


@pytest.mark.parametrize("path", ["/api/mcp", "/api/mcp/toolboxes"])
@pytest.mark.parametrize("mode", ERAS)
async def test_template_variables_complete(served: tuple[str, CampusHarness], path: str, mode: str) -> None:
    base, campus = served
    token = await token_for(campus.deployment, READ_SCOPES)
    async with mcp_client(f"{base}/api/mcp", token, mode) as tools:
        term, crn, code = await a_section(tools)
    section = ResourceTemplateReference(uri="campus://sections/{term}/{crn}")
    async with mcp_client(f"{base}{path}", token, mode) as client:
        terms = await client.complete(section, {"name": "term", "value": term[:3]})
        crns = await client.complete(section, {"name": "crn", "value": crn[:3]}, context_arguments={"term": term})
        codes = await client.complete(
            ResourceTemplateReference(uri="campus://courses/{code}"), {"name": "code", "value": code[:3]}
        )
        schedule_terms = await client.complete(
            ResourceTemplateReference(uri="campus://me/schedule/{term}"), {"name": "term", "value": term}
        )
    assert term in terms.completion.values
    assert crn in crns.completion.values and all(v.startswith(crn[:3]) for v in crns.completion.values)
    assert code in codes.completion.values
    assert schedule_terms.completion.values == [term]


def rooms_plugin(template: ResourceTemplate) -> Any:
    class Rooms:
        @hookimpl
        def campus_plugin_info(self) -> PluginInfo:
            return PluginInfo(name="rooms", version="1", title="Rooms", description="Rooms.")

        @hookimpl
        def register_resources(self) -> list[ResourceTemplate]:
            return [template]

    return Rooms()


def test_a_template_must_fit_its_tool_and_name_registered_completers() -> None:
    settings = settings_for("sqlite+aiosqlite:///:memory:")
    section = ResourceTemplate(
        uri_template="campus://again/{term}/{crn}",
        name="again",
        title="A section",
        description="One.",
        tool="get_section",
    )
    load_registry(settings, [("rooms", rooms_plugin(section))])  # the same tool under another URI: fine
    wrong = [
        (dataclasses.replace(section, completers={"term": "no-such-completer"}), "no-such-completer"),
        (dataclasses.replace(section, uri_template="campus://again/{room}"), "no argument room"),
        (dataclasses.replace(section, tool="set_my_sections"), "writes"),
        (dataclasses.replace(section, uri_template="https://example.org/{crn}"), "campus://"),
    ]
    for template, said in wrong:
        with pytest.raises(PluginError, match=said):
            load_registry(settings, [("rooms", rooms_plugin(template))])
    # A template whose tool is not offered is left out with the tool.
    absent = dataclasses.replace(section, tool="no_such_tool")
    assert "campus://again/{term}/{crn}" not in load_registry(settings, [("rooms", rooms_plugin(absent))]).resources
